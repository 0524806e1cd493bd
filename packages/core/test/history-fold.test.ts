// The per-step history computations are incremental (decision 0093): each must give what the
// whole-history computation it replaced gives, at every point of any log, and for hostile
// `history/replace` spans too.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Json, SessionEvent } from '@dsh/protocol'
import { historyTokens, historyTokensAfter, visibleItems } from '../src/compaction/spans.js'
import { estimateMessage } from '../src/compaction/tokens.js'
import { MessageDeriver, deriveMessages } from '../src/session/derive.js'
import { Session } from '../src/session/session.js'

const text = (t: string) => [{ type: 'text', text: t }]

/** One event's type and data; `at` is the seq it will get (replace spans are drawn around it). */
const eventAt = (at: number): fc.Arbitrary<[string, Json]> => fc.oneof(
  fc.string({ maxLength: 6 }).map((t): [string, Json] => ['user/message', { id: `u${at}`, content: text(t) }]),
  fc.tuple(fc.string({ maxLength: 9 }), fc.boolean(), fc.option(fc.nat(500), { nil: undefined })).map(([t, empty, tokens]): [string, Json] => [
    'assistant/message',
    { id: `a${at}`, content: empty ? [] : text(t), finish: 'stop', ...(tokens === undefined ? {} : { usage: { inputTokens: tokens, outputTokens: 3 } }) },
  ]),
  fc.string({ maxLength: 12 }).map((t): [string, Json] => ['tool/result', { callId: `c${at}`, name: 'echo', content: text(t), isError: false }]),
  fc.constant<[string, Json]>(['notice', { level: 'info', message: 'x' }]),
  // spans before, around and (hostile) after the replace itself
  fc.tuple(fc.integer({ min: 0, max: at + 3 }), fc.integer({ min: 0, max: at + 3 }), fc.string({ maxLength: 4 })).map(([a, b, s]): [string, Json] => [
    'history/replace', { fromSeq: Math.min(a, b), toSeq: Math.max(a, b), summary: s },
  ]),
)

/** A log of up to 60 events, and after which of them the computations are asked. */
const logs = fc.array(fc.tuple(fc.nat(1_000), fc.boolean()), { maxLength: 60 }).chain((picks) =>
  fc.tuple(...picks.map((_, i) => eventAt(i))).map((typed) => ({
    events: typed.map(([type, data], seq): SessionEvent => ({ type, seq, time: seq, data })),
    askAfter: picks.map(([, ask]) => ask),
    seqs: picks.map(([n]) => n % (picks.length + 2)),
  })))

/** What the step computations were before they were incremental: a whole pass over the history. */
function reference(events: readonly SessionEvent[]) {
  const items = visibleItems(events.slice()) // a fresh array: its own fold, from the start
  const costs = items.map((i) => estimateMessage(i.message))
  return {
    messages: items.map((i) => i.message),
    total: costs.reduce((a, b) => a + b, 0),
    after: (seq: number) => items.reduce((n, item, i) => (item.lo > seq ? n + costs[i]! : n), 0),
  }
}

describe('incremental history computations', () => {
  it('historyTokens and historyTokensAfter on a growing log equal the whole-history sums, at every point asked', () => {
    fc.assert(fc.property(logs, ({ events, askAfter, seqs }) => {
      const growing: SessionEvent[] = []
      for (let i = 0; i < events.length; i++) {
        growing.push(events[i]!)
        if (!askAfter[i]) continue
        const want = reference(growing)
        expect(historyTokens(growing)).toBe(want.total)
        for (const seq of [seqs[i]!, i, i - 1, -1]) expect(historyTokensAfter(growing, seq)).toBe(want.after(seq))
      }
      const want = reference(events)
      expect(historyTokens(growing)).toBe(want.total)
      expect(historyTokensAfter(growing, -1)).toBe(want.total)
    }), { numRuns: 300 })
  })

  it('a MessageDeriver fed one event at a time hands out the messages of its items, in order, and of deriveMessages', () => {
    fc.assert(fc.property(logs, ({ events }) => {
      const deriver = new MessageDeriver()
      for (let i = 0; i < events.length; i++) {
        deriver.push(events[i]!)
        const messages = deriver.messages
        const items = deriver.items
        expect(messages.length).toBe(items.length)
        expect(deriver.size).toBe(items.length)
        messages.forEach((m, j) => {
          expect(m).toBe(items[j]!.message)
          expect(deriver.item(j)).toBe(items[j])
        })
        expect(messages).toEqual(deriveMessages(events.slice(0, i + 1)))
      }
    }), { numRuns: 200 })
  })

  it('Session.deriveMessages is a fresh array each call: changing one does not change the history', () => {
    const session = new Session({ format: 'dsh-session', version: 1, id: 's', created: 0, cwd: '/' }, [], { write() {}, async flush() {}, async close() {} })
    session.append('user/message', { id: 'u1', content: text('a') })
    const first = session.deriveMessages()
    first.push(first[0]!)
    first.length = 0
    expect(session.deriveMessages()).toEqual([{ role: 'user', content: text('a') }])
    session.append('history/replace', { fromSeq: 0, toSeq: 0, summary: 'S' })
    const second = session.deriveMessages()
    second.pop()
    expect(session.deriveMessages()).toHaveLength(1)
    expect(session.deriveMessages()).not.toBe(session.deriveMessages())
  })

  it('a log array that got shorter (not a session log) is folded again from its start', () => {
    const events: SessionEvent[] = [
      { type: 'user/message', seq: 0, time: 0, data: { id: 'u', content: text('abcdefgh') } },
      { type: 'tool/result', seq: 1, time: 1, data: { callId: 'c', name: 'echo', content: text('x'), isError: false } },
    ]
    const both = historyTokens(events)
    events.pop()
    expect(historyTokens(events)).toBe(reference(events).total)
    expect(historyTokens(events)).toBeLessThan(both)
  })
})
