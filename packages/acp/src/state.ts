import type { Agent, Session, TurnOutcome } from '@dsh/core'
import type { SessionProjector } from './translate.js'
import type { WireOptions } from './wire.js'

/** The prompt whose turn streams now. Updates of a turn are sent only while its token is open. */
export interface TurnToken {
  cancelled: boolean
  /** Aborts a running command (a model turn is aborted through the agent). */
  abort?: AbortController
  usage: { input: number; output: number; thought: number; cacheRead: number; cacheWrite: number; steps: number }
}

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
  tail: Promise<void>
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
}

export function newTurn(): TurnToken {
  return { cancelled: false, usage: { input: 0, output: 0, thought: 0, cacheRead: 0, cacheWrite: 0, steps: 0 } }
}

/** Whether updates of the running turn may reach the client. */
export function turnOpen(state: SessionState): boolean {
  return !!state.turn && !state.turn.cancelled
}
