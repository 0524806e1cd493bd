import { describe, expect, it } from 'vitest'
import { CORE_EVENT_TYPES, isDshError } from '@dsh/protocol'
import type { Json, SessionEvent } from '@dsh/protocol'
import { checkReadable, INTERRUPTED_RESULT_TEXT, repairEvents } from '../src/session/repair.js'

function log(...entries: [string, unknown, true?][]): SessionEvent[] {
  return entries.map(([type, data, ignorable], seq) => ({ type, seq, time: seq, data: data as Json, ...(ignorable ? { ignorable } : {}) }))
}
const call = (id: string, name = 'bash') => ({ type: 'tool-call', id, name, arguments: '{}' })
const synthetic = (callId: string, name = 'bash') => ({
  type: 'tool/result',
  data: { callId, name, content: [{ type: 'text', text: INTERRUPTED_RESULT_TEXT }], isError: true, synthetic: true },
})
const turnStart: [string, unknown] = ['turn/start', { turn: 3 }]
const stepStart: [string, unknown] = ['step/start', { turn: 3, step: 2 }]

describe('repairEvents', () => {
  it('returns nothing for a closed log', () => {
    expect(repairEvents(log(turnStart, stepStart, ['step/end', { turn: 3, step: 2 }], ['turn/end', { turn: 3, reason: 'completed' }]))).toEqual([])
    expect(repairEvents([])).toEqual([])
  })

  it('crash after tool/call: results for every unanswered call in call order, then step/end and turn/end', () => {
    const events = log(
      turnStart, stepStart,
      ['assistant/message', { id: 'a', content: [{ type: 'text', text: 'x' }, call('c1'), call('c2', 'read'), call('c3')], finish: 'tool-calls' }],
      ['tool/call', { callId: 'c1', name: 'bash', args: {} }],
      ['tool/call', { callId: 'c2', name: 'read', args: null }],
      ['tool/result', { callId: 'c2', name: 'read', content: [], isError: false }],
      ['tool/call', { callId: 'c3', name: 'bash', args: {} }],
    )
    expect(repairEvents(events)).toEqual([
      synthetic('c1'),
      synthetic('c3'),
      { type: 'step/end', data: { turn: 3, step: 2 } },
      { type: 'turn/end', data: { turn: 3, reason: 'interrupted' } },
    ])
  })

  it('crash mid-step (streaming, no assistant message yet): step/end and turn/end only', () => {
    const events = log(turnStart, ['user/message', { id: 'u', content: [] }], stepStart,
      ['assistant/chunk', { messageId: 'a', kind: 'text', delta: 'par' }, true])
    expect(repairEvents(events)).toEqual([
      { type: 'step/end', data: { turn: 3, step: 2 } },
      { type: 'turn/end', data: { turn: 3, reason: 'interrupted' } },
    ])
  })

  it('crash between steps: the open turn only; a tool/call without an assistant block is answered too', () => {
    expect(repairEvents(log(turnStart, stepStart, ['step/end', { turn: 3, step: 2 }]))).toEqual([
      { type: 'turn/end', data: { turn: 3, reason: 'interrupted' } },
    ])
    expect(repairEvents(log(['tool/call', { callId: 'z', name: 'grep', args: {} }]))).toEqual([synthetic('z', 'grep')])
  })

  it('is idempotent: the log with its repairs appended needs no more repair', () => {
    const events = log(turnStart, stepStart,
      ['assistant/message', { id: 'a', content: [call('c1')], finish: 'tool-calls' }])
    const repaired = [...events, ...repairEvents(events).map((e, i) => ({ ...e, seq: events.length + i, time: 0 }))]
    expect(repairEvents(repaired)).toEqual([])
  })
})

describe('checkReadable', () => {
  it('accepts the core vocabulary, ignorable unknowns and registered types', () => {
    const events = log(...[...CORE_EVENT_TYPES].map((t): [string, unknown] => [t, {}]), ['future/thing', {}, true])
    expect(() => checkReadable(events)).not.toThrow()
    expect(() => checkReadable(log(['todo/write', {}]), new Set([...CORE_EVENT_TYPES, 'todo/write']))).not.toThrow()
  })

  it('refuses an unknown event without ignorable, naming its type and seq, with an upgrade hint', () => {
    let thrown: unknown
    try {
      checkReadable(log(['turn/start', { turn: 1 }], ['future/thing', { x: 1 }]))
    } catch (error) { thrown = error }
    expect(isDshError(thrown, 'UNSUPPORTED_EVENT')).toBe(true)
    const error = thrown as Error & { hint?: string; data?: unknown }
    expect(error.message).toBe('session log holds event type "future/thing" (seq 1) that this dsh does not know')
    expect(error.hint).toContain('upgrade dsh')
    expect(error.data).toEqual({ type: 'future/thing', seq: 1 })
  })
})
