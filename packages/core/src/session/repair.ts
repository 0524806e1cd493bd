import { CORE_EVENT_TYPES, DshError } from '@dsh/protocol'
import type { Json, SessionEvent } from '@dsh/protocol'
import { SessionErrorCode } from './errors.js'

/** The content of a synthetic result for a call that a crash left without one. */
export const INTERRUPTED_RESULT_TEXT = '[interrupted: dsh stopped before this call finished]'

export interface RepairEvent { type: string; data: Json }

/**
 * Pure: the events to append so that what a crash left open is closed, in this order:
 * 1. a synthetic `tool/result {isError: true, synthetic: true}` for every call without a
 *    result (calls are the tool-call blocks of `assistant/message` events and `tool/call`
 *    events, in the order they were first logged);
 * 2. `step/end {turn, step}` for a `step/start` with no `step/end`;
 * 3. `turn/end {turn, reason: 'interrupted'}` for a `turn/start` with no `turn/end`.
 * A log with nothing open yields [].
 */
export function repairEvents(events: readonly SessionEvent[]): RepairEvent[] {
  const pending = new Map<string, string>()
  let turn: number | undefined
  let step: { turn: number; step: number } | undefined
  for (const event of events) {
    switch (event.type) {
      case 'turn/start':
        turn = (event as SessionEvent<'turn/start'>).data.turn
        break
      case 'turn/end':
        turn = undefined
        break
      case 'step/start': {
        const data = (event as SessionEvent<'step/start'>).data
        step = { turn: data.turn, step: data.step }
        break
      }
      case 'step/end':
        step = undefined
        break
      case 'assistant/message':
        for (const block of (event as SessionEvent<'assistant/message'>).data.content) {
          if (block.type === 'tool-call' && !pending.has(block.id)) pending.set(block.id, block.name)
        }
        break
      case 'tool/call': {
        const data = (event as SessionEvent<'tool/call'>).data
        if (!pending.has(data.callId)) pending.set(data.callId, data.name)
        break
      }
      case 'tool/result':
        pending.set((event as SessionEvent<'tool/result'>).data.callId, RESOLVED)
        break
    }
  }
  const out: RepairEvent[] = []
  for (const [callId, name] of pending) {
    if (name === RESOLVED) continue
    out.push({
      type: 'tool/result',
      data: { callId, name, content: [{ type: 'text', text: INTERRUPTED_RESULT_TEXT }], isError: true, synthetic: true },
    })
  }
  if (step) out.push({ type: 'step/end', data: { turn: step.turn, step: step.step } })
  if (turn !== undefined) out.push({ type: 'turn/end', data: { turn, reason: 'interrupted' } })
  return out
}

/** Marks a call id as answered (a name can never contain a NUL). */
const RESOLVED = '\u0000resolved'

/**
 * Throws `UNSUPPORTED_EVENT` for the first event whose type is neither in `known`
 * nor marked `ignorable`: this reader would misread the log. `known` defaults to
 * the core vocabulary; plugins add theirs through the session manager.
 */
export function checkReadable(events: readonly SessionEvent[], known: ReadonlySet<string> = CORE_EVENT_TYPES): void {
  for (const event of events) {
    if (event.ignorable || known.has(event.type)) continue
    throw new DshError(SessionErrorCode.UNSUPPORTED_EVENT,
      `session log holds event type "${event.type}" (seq ${event.seq}) that this dsh does not know`, {
        hint: 'upgrade dsh, or enable the plugin that writes this event type',
        data: { type: event.type, seq: event.seq },
      })
  }
}
