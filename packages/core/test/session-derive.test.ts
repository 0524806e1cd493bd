import { describe, expect, it } from 'vitest'
import type { Json, ModelMessage, SessionEvent } from '@dsh/protocol'
import { deriveMessages } from '../src/session/derive.js'
import { Session } from '../src/session/session.js'

/** Builds a log with seq = index from [type, data] pairs. */
function log(...entries: [string, unknown, true?][]): SessionEvent[] {
  return entries.map(([type, data, ignorable], seq) => ({ type, seq, time: 1000 + seq, data: data as Json, ...(ignorable ? { ignorable } : {}) }))
}
const text = (t: string) => [{ type: 'text' as const, text: t }]
const user = (t: string): [string, unknown] => ['user/message', { id: `u-${t}`, content: text(t) }]
const said = (t: string): [string, unknown] => ['assistant/message', { id: `a-${t}`, content: text(t), finish: 'stop' }]
const summary = (s: string): ModelMessage => ({ role: 'user', content: text(`[Summary of earlier conversation]\n${s}`) })

describe('deriveMessages', () => {
  it('folds a turn with chunks, a tool call and bookkeeping into exactly user, assistant, tool, assistant', () => {
    const call = { type: 'tool-call', id: 'c1', name: 'bash', arguments: '{"command":"ls"}' }
    const events = log(
      ['turn/start', { turn: 1 }],
      user('list files'),
      ['step/start', { turn: 1, step: 1 }],
      ['request/header', { system: 'sys', tools: [], config: { provider: 'p', model: 'm' } }],
      ['assistant/chunk', { messageId: 'a1', kind: 'reasoning', delta: 'thinking' }, true],
      ['assistant/chunk', { messageId: 'a1', kind: 'text', delta: 'Let me look' }, true],
      ['assistant/message', { id: 'a1', content: [{ type: 'reasoning', text: 'thinking' }, { type: 'text', text: 'Let me look' }, call], finish: 'tool-calls' }],
      ['tool/call', { callId: 'c1', name: 'bash', args: { command: 'ls' } }],
      ['tool/result', { callId: 'c1', name: 'bash', content: text('a.txt'), isError: false }],
      ['step/end', { turn: 1, step: 1 }],
      ['llm/retry', { attempt: 1, code: 'SERVER', message: '500', delayMs: 10 }],
      ['notice', { level: 'warn', message: 'hello' }],
      ['approval/request', { callId: 'c1' }, true],
      ['step/start', { turn: 1, step: 2 }],
      ['assistant/message', { id: 'a2', content: [], finish: 'stop' }],
      said('There is a.txt'),
      ['step/end', { turn: 1, step: 2 }],
      ['turn/end', { turn: 1, reason: 'completed' }],
    )
    expect(deriveMessages(events)).toEqual([
      { role: 'user', content: text('list files') },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'thinking' }, { type: 'text', text: 'Let me look' }, call] },
      { role: 'tool', callId: 'c1', name: 'bash', content: text('a.txt'), isError: false },
      { role: 'assistant', content: text('There is a.txt') },
    ])
  })

  it('replaces the model-visible events in [fromSeq, toSeq] with one summary at their place', () => {
    const events = log(
      user('one'), // 0
      said('two'), // 1
      ['assistant/chunk', { messageId: 'x', kind: 'text', delta: 'y' }, true], // 2
      user('three'), // 3
      said('four'), // 4
      ['history/replace', { fromSeq: 1, toSeq: 3, summary: 'S1' }], // 5
      user('five'), // 6
    )
    expect(deriveMessages(events)).toEqual([
      { role: 'user', content: text('one') },
      summary('S1'),
      { role: 'assistant', content: text('four') },
      { role: 'user', content: text('five') },
    ])
  })

  it('lets a later replace cover an earlier summary, and places an empty-range summary by seq', () => {
    const events = log(
      user('one'), // 0
      said('two'), // 1
      ['history/replace', { fromSeq: 0, toSeq: 0, summary: 'S1' }], // 2
      user('three'), // 3
      ['turn/start', { turn: 2 }], // 4
      said('four'), // 5
      ['history/replace', { fromSeq: 0, toSeq: 3, summary: 'S2' }], // 6
      ['history/replace', { fromSeq: 4, toSeq: 4, summary: 'S3' }], // 7: covers no model-visible event
    )
    expect(deriveMessages(events)).toEqual([summary('S2'), summary('S3'), { role: 'assistant', content: text('four') }])
  })

  it('keeps a partially overlapped summary and does not replace events logged after the replace', () => {
    const events = log(
      user('one'), // 0
      said('two'), // 1
      user('three'), // 2
      ['history/replace', { fromSeq: 0, toSeq: 1, summary: 'S1' }], // 3
      ['history/replace', { fromSeq: 1, toSeq: 9, summary: 'S2' }], // 4: S1 spans [0,1], only partly inside
      said('five'), // 5: logged after the replace, stays
    )
    expect(deriveMessages(events)).toEqual([summary('S1'), summary('S2'), { role: 'assistant', content: text('five') }])
  })

  it('gives the same answer incrementally (Session) as in one pass, at every prefix', () => {
    const events = log(
      user('a'), said('b'), user('c'),
      ['history/replace', { fromSeq: 0, toSeq: 1, summary: 'S' }],
      said('d'),
      ['tool/result', { callId: 'k', name: 't', content: text('r'), isError: true }],
      ['history/replace', { fromSeq: 0, toSeq: 5, summary: 'T' }],
      user('e'),
    )
    const session = new Session({ format: 'dsh-session', version: 1, id: 's', created: 0, cwd: '/' }, [],
      { write() {}, async flush() {}, async close() {} })
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!
      session.append(event.type, event.data)
      expect(session.deriveMessages()).toEqual(deriveMessages(events.slice(0, i + 1)))
    }
    expect(session.deriveMessages()).toEqual([summary('T'), { role: 'user', content: text('e') }])
  })

  it('hands out frozen messages that keep their identity while they stay in the history (adapters cache by it)', () => {
    const session = new Session({ format: 'dsh-session', version: 1, id: 's', created: 0, cwd: '/' }, [],
      { write() {}, async flush() {}, async close() {} })
    session.append('user/message', { id: 'u1', content: text('a') })
    const [first] = session.deriveMessages()
    session.append('assistant/message', { id: 'm1', content: text('b'), finish: 'stop' })
    session.append('history/replace', { fromSeq: 1, toSeq: 1, summary: 'S' })
    const now = session.deriveMessages()
    expect(now[0]).toBe(first)
    for (const m of now) {
      expect(Object.isFrozen(m)).toBe(true)
      expect(Object.isFrozen(m.content)).toBe(true)
      for (const part of m.content) expect(Object.isFrozen(part)).toBe(true)
    }
    expect(() => { (now[0] as { role: string }).role = 'assistant' }).toThrow(TypeError)
  })
})
