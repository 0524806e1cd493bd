import { describe, expect, it } from 'vitest'
import type { Json, ModelMessage, SessionEvent } from '@dsh/protocol'
import { pickSpan, visibleItems, type VisibleItem } from '../src/compaction/spans.js'
import { SUMMARY_SYSTEM, elide, summaryPrompt, summaryRequestOf, transcript } from '../src/compaction/summary.js'
import { IMAGE_TOKENS, estimateMessage, estimateRequest, usageBaseline } from '../src/compaction/tokens.js'
import { SUMMARY_PREFIX, deriveMessages } from '../src/session/derive.js'

function log(...entries: [string, unknown][]): SessionEvent[] {
  return entries.map(([type, data], seq) => ({ type, seq, time: 1000 + seq, data: data as Json }))
}
const text = (t: string) => [{ type: 'text' as const, text: t }]
const user = (t: string): [string, unknown] => ['user/message', { id: `u-${t}`, content: text(t) }]
const said = (t: string, usage?: object): [string, unknown] => ['assistant/message', { id: `a-${t}`, content: text(t), finish: 'stop', ...(usage ? { usage } : {}) }]
const call = (id: string): [string, unknown] => ['assistant/message', { id: `a-${id}`, content: [{ type: 'tool-call', id, name: 'echo', arguments: `{"text":"${id}"}` }], finish: 'tool-calls' }]
const result = (id: string): [string, unknown] => ['tool/result', { callId: id, name: 'echo', content: text(`echo ${id}`), isError: false }]
const replace = (fromSeq: number, toSeq: number, summary: string): [string, unknown] => ['history/replace', { fromSeq, toSeq, summary }]

/** A history of items with given roles and uniform costs, for pickSpan. */
function items(roles: string): VisibleItem[] {
  return [...roles].map((r, i) => ({
    lo: i * 10, hi: i * 10 + (r === 's' ? 5 : 0), summary: r === 's',
    message: (r === 'u' || r === 's' ? { role: 'user', content: text(r) } : r === 'a' ? { role: 'assistant', content: text('a') } : { role: 'tool', callId: 'c', name: 'echo', content: text('t'), isError: false }) as ModelMessage,
  }))
}
const ones = (n: number) => Array.from({ length: n }, () => 10)

describe('visibleItems', () => {
  it('gives exactly the messages of deriveMessages, with the seq span each stands for', () => {
    const events = log(
      user('one'), said('two'), ['notice', { level: 'info', message: 'x' }], user('three'), call('c1'), result('c1'),
      replace(0, 1, 'first'), said('four'), replace(0, 5, 'second'), user('five'), ['assistant/message', { id: 'e', content: [], finish: 'stop' }],
    )
    const visible = visibleItems(events)
    expect(visible.map((i) => i.message)).toEqual(deriveMessages(events))
    expect(visible.map(({ lo, hi, summary }) => ({ lo, hi, summary }))).toEqual([
      { lo: 0, hi: 5, summary: true }, { lo: 7, hi: 7, summary: false }, { lo: 9, hi: 9, summary: false },
    ])
    expect(visible[0]!.message).toEqual({ role: 'user', content: text(`${SUMMARY_PREFIX}second`) })
  })
})

describe('pickSpan', () => {
  it('summarises the run before the latest user message and keeps the recent tokens', () => {
    // u a t a | u a  (keep 20 tokens = the last two)
    const span = pickSpan(items('uataua'), ones(6), { keepTokens: 20, maxSpanTokens: 1000 })
    expect(span).toEqual({ first: 0, count: 4, fromSeq: 0, toSeq: 30, tokens: 40 })
  })

  it('never ends a span between a tool call and its results', () => {
    // the kept part may not start at a tool result, so with 15 tokens nothing is kept verbatim; the older run is larger
    expect(pickSpan(items('uatuat'), ones(6), { keepTokens: 15, maxSpanTokens: 1000 })).toEqual({ first: 0, count: 3, fromSeq: 0, toSeq: 20, tokens: 30 })
    // capped by maxSpanTokens: the cut falls on the last balanced point under the cap
    expect(pickSpan(items('uatatatu'), ones(8), { keepTokens: 10, maxSpanTokens: 45 })).toEqual({ first: 0, count: 3, fromSeq: 0, toSeq: 20, tokens: 30 })
    // a first balanced piece is taken even when it alone is over the cap
    expect(pickSpan(items('uatu'), ones(4), { keepTokens: 10, maxSpanTokens: 5 })).toEqual({ first: 0, count: 1, fromSeq: 0, toSeq: 0, tokens: 10 })
  })

  it('compacts inside a long turn without touching its user message, taking the larger run', () => {
    // s | u | a t a t a t a t | a t (kept)
    const span = pickSpan(items('suatatatatat'), ones(12), { keepTokens: 20, maxSpanTokens: 1000 })
    expect(span).toEqual({ first: 2, count: 8, fromSeq: 20, toSeq: 90, tokens: 80 })
  })

  it('finds nothing when only a summary or nothing lies outside what is kept', () => {
    expect(pickSpan(items('su'), ones(2), { keepTokens: 0, maxSpanTokens: 1000 })).toBeUndefined()
    expect(pickSpan(items('ua'), ones(2), { keepTokens: 100, maxSpanTokens: 1000 })).toBeUndefined()
    expect(pickSpan([], [], { keepTokens: 0, maxSpanTokens: 1000 })).toBeUndefined()
  })
})

describe('summary request', () => {
  it('renders history as a transcript: tools named, reasoning left out, long parts elided', () => {
    const messages: ModelMessage[] = [
      { role: 'user', content: text(`${SUMMARY_PREFIX}earlier`) },
      { role: 'user', content: [...text('look'), { type: 'image', mimeType: 'image/png', data: 'AAAA' }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'hmm' }, ...text('sure'), { type: 'tool-call', id: 'c', name: 'read', arguments: '{"path":"a"}' }] },
      { role: 'tool', callId: 'c', name: 'read', content: text('x'.repeat(7000)), isError: true },
    ]
    const out = transcript(messages)
    expect(out.split('\n\n').slice(0, 5)).toEqual([
      '[summary of what came before]\nearlier', '[user]\nlook\n[image]', '[assistant]\nsure', '[assistant called read]\n{"path":"a"}',
      `[tool result: read, error]\n${'x'.repeat(3600)}\n[… 1000 characters elided …]\n${'x'.repeat(2400)}`,
    ])
    expect(out).not.toContain('hmm')
    expect(elide('short')).toBe('short')
    expect(summaryPrompt([{ role: 'user', content: text('hi') }], ' names ')).toBe(
      'Summarise this part of the conversation (it will replace it in the agent\'s history):\n\n<conversation>\n[user]\nhi\n</conversation>' +
      '\n\nWhen summarising, pay particular attention to: names')
  })

  it('rebuilds the request a compaction/start logged', () => {
    const event = log(['compaction/start', {
      fromSeq: 0, toSeq: 3, messages: 2, tokens: 10, reason: 'manual',
      request: { system: SUMMARY_SYSTEM, config: { provider: 'p', model: 'm', maxTokens: 100 }, prompt: 'P' },
    }])[0] as SessionEvent<'compaction/start'>
    expect(summaryRequestOf(event)).toEqual({
      system: SUMMARY_SYSTEM, config: { provider: 'p', model: 'm', maxTokens: 100 }, tools: [], messages: [{ role: 'user', content: text('P') }],
    })
  })
})

describe('token accounting', () => {
  it('estimates chars/4 of the JSON, images at a flat rate', () => {
    const message: ModelMessage = { role: 'user', content: text('abcd') }
    expect(estimateMessage(message)).toBe(Math.ceil(JSON.stringify(message).length / 4))
    const image: ModelMessage = { role: 'user', content: [{ type: 'image', mimeType: 'image/png', data: 'A'.repeat(100_000) }] }
    expect(estimateMessage(image)).toBe(Math.ceil(JSON.stringify({ ...image, content: [{ type: 'image', mimeType: 'image/png', data: '' }] }).length / 4) + IMAGE_TOKENS)
    expect(estimateRequest({ system: 'x'.repeat(8), tools: [], messages: [message] })).toBe(2 + 1 + estimateMessage(message))
  })

  it('takes the provider usage of the last answer plus an estimate of what followed, unless history was replaced', () => {
    const events = log(user('q'), said('a', { inputTokens: 100, outputTokens: 20 }), user('next'))
    expect(usageBaseline(events, (seq) => (seq === 1 ? 7 : 0))).toBe(127)
    expect(usageBaseline(log(user('q'), said('a')), () => 0)).toBeUndefined()
    expect(usageBaseline(log(user('q'), said('a', { inputTokens: 100, outputTokens: 20 }), replace(0, 1, 's')), () => 0)).toBeUndefined()
  })
})
