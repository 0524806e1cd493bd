import type * as acp from '@agentclientprotocol/sdk/unstable'
import type { SessionEvent } from '@dsh/protocol'
import { SessionProjector, type EventCards, type Presenter } from './translate.js'
import type { WireOptions } from './wire.js'

/**
 * The `session/load` replay of a stored log, pure: user messages, agent text and
 * reasoning (assembled messages, one chunk each), tool calls with their final state
 * (terminal cards included when the client declared them) and plan snapshots, in log
 * order. Chunks are skipped (the assembled message carries the same text). `views[i]`,
 * when given, is the host's view of `events[i]` (its card wins over `present`).
 */
export function replayUpdates(events: readonly SessionEvent[], opts: WireOptions, present: Presenter, views?: readonly (EventCards | null)[]): acp.SessionUpdate[] {
  const projector = new SessionProjector(opts, present, 'replay')
  const out: acp.SessionUpdate[] = []
  events.forEach((event, i) => out.push(...projector.push(event, views?.[i])))
  return out
}

/** The latest `session/title` of a log. */
export function titleOf(events: readonly SessionEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!
    if (event.type === 'session/title') {
      const title = (event.data as { title?: unknown }).title
      if (typeof title === 'string') return title
    }
  }
  return undefined
}
