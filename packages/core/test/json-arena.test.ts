import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { JsonArenas, type ArenaUnit } from '@dsh/core'

/**
 * A toy wire format with the shape that needs guards: items are `{run, text}`; consecutive
 * `run` items merge into one array element (as tool results merge into one user message), an
 * item with text '' sends nothing (as an assistant message with nothing sendable).
 */
interface Item { run: boolean; text: string }
type Element = string | string[]

function elements(items: readonly Item[]): Element[] {
  const out: Element[] = []
  let run: string[] | undefined
  for (const item of items) {
    if (item.run) {
      if (run) run.push(item.text)
      else out.push(run = [item.text])
      continue
    }
    run = undefined
    if (item.text !== '') out.push(item.text)
  }
  return out
}

const HEAD = '{"v":1,"xs":['

function* units(items: readonly Item[], from: number, limit: number): Generator<ArenaUnit> {
  let i = from
  while (i < limit) {
    if (!items[i]!.run) {
      yield { text: items[i]!.text === '' ? '' : JSON.stringify(items[i]!.text), span: 1, guard: 0 }
      i++
      continue
    }
    let end = i
    while (end < items.length && items[end]!.run) end++
    if (end >= limit) return // closed only by an item the arena may read
    yield { text: JSON.stringify(items.slice(i, end).map((x) => x.text)), span: end - i, guard: 1 }
    i = end
  }
}

/** The body as chunks: the arena's prefix, then the rest encoded fresh. */
function encode(arenas: JsonArenas<Item>, items: readonly Item[], limit: number): Uint8Array[] {
  const prefix = arenas.prefix(HEAD, false, items, limit, (from) => units(items, from, limit))
  const rest = elements(items.slice(prefix.covered)).map((e) => JSON.stringify(e))
  return [prefix.bytes, Buffer.from(`${prefix.hasElements && rest.length > 0 ? ',' : ''}${rest.join(',')}]}`, 'utf8')]
}

const item = fc.record({ run: fc.boolean(), text: fc.oneof(fc.constant(''), fc.string({ unit: 'binary', maxLength: 8 })) }).map((x) => Object.freeze(x))

describe('JsonArenas (append-only encoded prefixes of growing bodies)', () => {
  it('for any sequence of appends, cuts, divergences after a run and moving limits, prefix + rest is the UTF-8 of the whole body, and no byte handed out changes', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('append' as const), add: fc.array(item, { minLength: 1, maxLength: 6 }) }),
      fc.record({ kind: fc.constant('cut' as const), keep: fc.nat({ max: 30 }) }),
    )
    fc.assert(fc.property(item, fc.array(fc.tuple(op, fc.nat({ max: 4 })), { minLength: 1, maxLength: 15 }), (first, ops) => {
      const arenas = new JsonArenas<Item>()
      let items: Item[] = [first]
      const sent: { chunk: Uint8Array; copy: Buffer }[] = []
      for (const [o, hold] of ops) {
        items = o.kind === 'append' ? [...items, ...o.add] : items.slice(0, Math.max(1, o.keep))
        const chunks = encode(arenas, items, Math.max(0, items.length - hold))
        expect(Buffer.concat(chunks).toString('utf8')).toBe(JSON.stringify({ v: 1, xs: elements(items) }))
        for (const chunk of chunks) sent.push({ chunk, copy: Buffer.from(chunk) })
      }
      for (const { chunk, copy } of sent) expect(Buffer.from(chunk).equals(copy)).toBe(true)
    }), { numRuns: 500 })
  })

  it('a growing history is encoded once: each step appends to the previous prefix, past the first buffer', () => {
    const arenas = new JsonArenas<Item>()
    const items: Item[] = []
    let previous: Uint8Array | undefined
    for (let i = 0; i < 3000; i++) {
      items.push(Object.freeze({ run: i % 3 !== 0, text: `item ${i} é` }))
      const [prefix] = encode(arenas, items, items.length)
      if (previous) expect(Buffer.from(prefix!.subarray(0, previous.byteLength)).equals(Buffer.from(previous))).toBe(true)
      previous = prefix
    }
    expect(previous!.byteLength).toBeGreaterThan(16_384)
  })
})
