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
 * Contract of `JsonArenas.prefix(head, headHasElements, items, limit, produce)`:
 * - the returned `bytes` are the UTF-8 of `head` followed by the elements of the units that
 *   cover `items[0 .. covered)`, comma-separated (a unit with text '' adds nothing); `covered
 *   ≤ limit`; `hasElements` says whether `bytes` holds an element (the next needs a comma).
 * - units are reused while every item they cover, and `guard` items after them (whose value
 *   decides where the unit ends), are the same objects, in order, and the head text is the
 *   same; otherwise the arena is rebuilt from the longest valid unit prefix.
 * - `produce(from)` is called once with the item index the arena has reached and returns the
 *   units to append from there, in order, each starting where the previous ended and ending
 *   at or before `limit`, its guard items inside `items`; the units cover only items that
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
  /** Whether the head holds elements; its byte length. */
  headElements: boolean
  headBytes: number
  buf: Buffer
  length: number
  hasElements: boolean
  /** The items compared on reuse: every unit's items and guards, in order. */
  items: K[]
  /** Per unit, flat (3 numbers each): the item index after it, the items it needs unchanged, the byte length after it. */
  ends: number[]
}

const MIN_BYTES = 16_384
const UNTIL = 0
const NEEDS = 1
const BYTES = 2
const STRIDE = 3

function units<K>(arena: Arena<K>): number {
  return arena.ends.length / STRIDE
}

function end<K>(arena: Arena<K>, unit: number, field: number): number {
  return arena.ends[unit * STRIDE + field]!
}

function fresh<K>(head: string, headElements: boolean): Arena<K> {
  const headBytes = Buffer.byteLength(head)
  const buf = Buffer.allocUnsafeSlow(Math.max(MIN_BYTES, headBytes * 2))
  buf.write(head, 0, 'utf8')
  return { head, headElements, headBytes, buf, length: headBytes, hasElements: headElements, items: [], ends: [] }
}

/** A new arena holding `from`'s first `keep` units (the old buffer is left as it is). */
function copied<K>(from: Arena<K>, keep: number): Arena<K> {
  if (keep === 0) return fresh(from.head, from.headElements)
  const bytes = end(from, keep - 1, BYTES)
  const buf = Buffer.allocUnsafeSlow(Math.max(MIN_BYTES, bytes * 2))
  from.buf.copy(buf, 0, 0, bytes)
  return {
    head: from.head, headElements: from.headElements, headBytes: from.headBytes, buf, length: bytes,
    // an element was written iff the units added bytes past the head
    hasElements: from.headElements || bytes > from.headBytes,
    items: from.items.slice(0, end(from, keep - 1, NEEDS)), ends: from.ends.slice(0, keep * STRIDE),
  }
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

  prefix(head: string, headHasElements: boolean, items: readonly K[], limit: number, produce: (from: number) => Iterable<ArenaUnit>): ArenaPrefix {
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
      const had = units(arena)
      let keep = had
      while (keep > 0 && (end(arena, keep - 1, NEEDS) > same || end(arena, keep - 1, UNTIL) > limit)) keep--
      if (keep < had) arena = copied(arena, keep)
      else if (same < arena.items.length) arena.items.length = same // guards past every kept unit's needs
    }
    this.arenas.set(first, arena)
    let at = units(arena) === 0 ? 0 : end(arena, units(arena) - 1, UNTIL)
    for (const unit of produce(at)) {
      if (unit.text !== '') {
        write(arena, arena.hasElements ? `,${unit.text}` : unit.text)
        arena.hasElements = true
      }
      const needs = at + unit.span + unit.guard
      for (let i = arena.items.length; i < needs; i++) arena.items.push(items[i]!)
      at += unit.span
      arena.ends.push(at, needs, arena.length)
    }
    return { bytes: arena.buf.subarray(0, arena.length), covered: at, hasElements: arena.hasElements }
  }
}
