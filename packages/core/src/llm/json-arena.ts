/**
 * Request bodies as UTF-8 bytes from an append-only, per-conversation arena (shared by the
 * provider adapters; decisions 0088, 0097).
 *
 * A body is `head` (the JSON text up to and including the `[` of its growing array, plus any
 * elements the head itself holds), then the array's elements, then a tail the caller encodes.
 * The elements made from a conversation's stable history prefix (frozen items the caller
 * will send again, unchanged, as long as the history only grows) are encoded once, as units,
 * into a buffer keyed by the conversation's first item; a request hands out that buffer's
 * prefix and the caller encodes only what is new or still moving.
 *
 * Contract of `JsonArenas.prefix(head, headHasElements, items, limit, units)`:
 * - the returned `bytes` are the UTF-8 of `head` followed by the elements of the units that
 *   cover `items[0 .. covered)`, comma-separated (a unit with text '' adds nothing); `covered
 *   ≤ limit`; `hasElements` says whether `bytes` holds an element (the next needs a comma).
 * - units are reused while every item they cover, and `guard` items after them (whose value
 *   decides where the unit ends), are the same objects, in order, and the head text is the
 *   same; otherwise the arena is rebuilt from the longest valid unit prefix.
 * - `units(from)` is called once with the item index the arena has reached and yields the
 *   units to append from there, in order, each starting where the previous ended and ending
 *   at or before `limit`, its guard items inside `items`; the caller yields only items that
 *   are frozen (a unit's text is derived from them alone), so a reused unit is never stale.
 * - bytes handed out are never written again: appends go past every length handed out, and
 *   growing or diverging copies into a new buffer (a body may still be in flight).
 */

export interface ArenaUnit {
  /** The JSON text of at most one array element, without a separating comma ('' for none). */
  text: string
  /** How many items it is made of (≥ 1). */
  span: number
  /** How many items after them must stay the same for the unit to stay valid. */
  guard: number
}

export interface ArenaPrefix {
  bytes: Uint8Array
  /** How many leading items `bytes` holds. */
  covered: number
  /** Whether `bytes` holds an element after the head's `[` (the next element needs a comma). */
  hasElements: boolean
}

interface Arena<K> {
  head: string
  buf: Buffer
  length: number
  hasElements: boolean
  /** The items compared on reuse: every unit's items and guards, in order. */
  items: K[]
  /** Per unit: the item index after it, the items it needs unchanged, and the byte length after it. */
  ends: { until: number; needs: number; bytes: number; hasElements: boolean }[]
}

const MIN_BYTES = 16_384

function fresh<K>(head: string, hasElements: boolean): Arena<K> {
  const length = Buffer.byteLength(head)
  const buf = Buffer.allocUnsafeSlow(Math.max(MIN_BYTES, length * 2))
  buf.write(head, 0, 'utf8')
  return { head, buf, length, hasElements, items: [], ends: [] }
}

/** A new arena holding `from`'s first `keep` units (the old buffer is left as it is). */
function copied<K>(from: Arena<K>, keep: number, headHasElements: boolean): Arena<K> {
  if (keep === 0) return fresh(from.head, headHasElements)
  const end = from.ends[keep - 1]!
  const buf = Buffer.allocUnsafeSlow(Math.max(MIN_BYTES, end.bytes * 2))
  from.buf.copy(buf, 0, 0, end.bytes)
  return { head: from.head, buf, length: end.bytes, hasElements: end.hasElements, items: from.items.slice(0, end.needs), ends: from.ends.slice(0, keep) }
}

function write<K>(arena: Arena<K>, text: string): void {
  const need = arena.length + Buffer.byteLength(text)
  if (need > arena.buf.length) {
    const bigger = Buffer.allocUnsafeSlow(Math.max(need, arena.buf.length * 2))
    arena.buf.copy(bigger, 0, 0, arena.length)
    arena.buf = bigger
  }
  arena.length += arena.buf.write(text, arena.length, 'utf8')
}

export class JsonArenas<K extends object> {
  /** Keyed by a conversation's first item: one arena per history. */
  private readonly arenas = new WeakMap<K, Arena<K>>()

  prefix(head: string, headHasElements: boolean, items: readonly K[], limit: number, units: (from: number) => Iterable<ArenaUnit>): ArenaPrefix {
    const first = items[0]
    if (first === undefined || limit <= 0) return { bytes: Buffer.from(head, 'utf8'), covered: 0, hasElements: headHasElements }
    let arena = this.arenas.get(first)
    // the head's own elements are a function of its text (the caller derives both from one request)
    if (!arena || arena.head !== head) {
      arena = fresh(head, headHasElements)
    } else {
      let same = 0
      const known = Math.min(arena.items.length, items.length)
      while (same < known && arena.items[same] === items[same]) same++
      let keep = arena.ends.length
      while (keep > 0 && (arena.ends[keep - 1]!.needs > same || arena.ends[keep - 1]!.until > limit)) keep--
      if (keep < arena.ends.length) arena = copied(arena, keep, headHasElements)
      else if (same < arena.items.length) arena.items.length = same // guards past every kept unit's needs
    }
    this.arenas.set(first, arena)
    let at = arena.ends.length === 0 ? 0 : arena.ends[arena.ends.length - 1]!.until
    for (const unit of units(at)) {
      if (unit.text !== '') {
        write(arena, arena.hasElements ? `,${unit.text}` : unit.text)
        arena.hasElements = true
      }
      const needs = at + unit.span + unit.guard
      for (let i = arena.items.length; i < needs; i++) arena.items.push(items[i]!)
      at += unit.span
      arena.ends.push({ until: at, needs, bytes: arena.length, hasElements: arena.hasElements })
    }
    return { bytes: arena.buf.subarray(0, arena.length), covered: at, hasElements: arena.hasElements }
  }
}
