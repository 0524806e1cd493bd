import type { Agent, Session, TurnOutcome } from '@dsh/core'
import type { TurnQueue, TurnToken } from './queue.js'
import type { SessionProjector } from './translate.js'
import type { WireOptions } from './wire.js'

/** One session open on a connection. */
export interface SessionState {
  readonly id: string
  readonly session: Session
  agent: Agent
  /** Live projection of this session's events (fed every event, gated on `turn`). */
  readonly live: SessionProjector
  readonly wire: WireOptions
  turn: TurnToken | undefined
  /** Serialises prompts: each waits for the previous one to answer. */
  readonly queue: TurnQueue
  /**
   * Session-level updates (mode, config, title, notices) are held back: while the
   * session is being set up (the client does not know its id yet) and after a cancel
   * until the client's next request on it.
   */
  quiet: boolean
  /** The outcome of the agent's latest turn. */
  lastOutcome: TurnOutcome | undefined
  /** Live output not sent yet, per call (coalesced). */
  readonly pendingOutput: Map<string, string>
  outputTimer: NodeJS.Timeout | undefined
  /** Unregisters this session's approval answerer (`ctx.approval.setSessionAnswerer`). */
  unanswer: () => void
}

/** Whether updates of the running turn may reach the client. */
export function turnOpen(state: SessionState): boolean {
  return !!state.turn && !state.turn.cancelled
}
