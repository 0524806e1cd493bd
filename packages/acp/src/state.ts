import type { ResultOf } from '@dsh/host-api'
import type { ErrorInfo } from '@dsh/protocol'
import type { TurnQueue, TurnToken } from './queue.js'
import type { SessionProjector } from './translate.js'
import type { WireOptions } from './wire.js'

/** The host's config of a session. */
export type SessionConfig = ResultOf<'session/get'>['session']['config']

export type HostStatus = 'idle' | 'running' | 'waiting'

/**
 * One host session open on this ACP connection: what ACP keeps of it (the session itself,
 * its agent, queue and cancel epochs are the host's). Fed by the host's notifications.
 */
export interface SessionState {
  readonly id: string
  readonly cwd: string
  /** The host's config of the session (model, effort, modes), from the latest call result or logged change. */
  config: SessionConfig
  title: string | undefined
  /** Live projection of this session's durable events (fed every event, gated on `turn`). */
  readonly live: SessionProjector
  readonly wire: WireOptions
  turn: TurnToken | undefined
  /** Serialises prompt replies: each waits for the previous one to answer. */
  readonly queue: TurnQueue
  /**
   * Session-level updates (mode, config, title, notices) are held back: while the
   * session is being set up (the client does not know its id yet) and after a cancel
   * until the client's next request on it.
   */
  quiet: boolean
  /** Events up to this seq were logged while the session was set up (their notices go out on release). */
  readonly setupSeq: number
  readonly setupNotices: { level: string; message: string }[]
  /** The host's `session/status`. */
  status: HostStatus
  /** Set once the host reports the session's log unwritable. */
  failure: ErrorInfo | undefined
  /** Wakes whoever waits on this session's events or status (a turn's end). */
  changed: () => void
  /** Live output not sent yet, per call (coalesced). */
  readonly pendingOutput: Map<string, string>
  outputTimer: NodeJS.Timeout | undefined
  /** Run when the session is released here (MCP servers ACP mounted on load/fork). */
  readonly disposers: (() => Promise<void> | void)[]
  closed: boolean
}

/** Whether updates of the running turn may reach the client. */
export function turnOpen(state: SessionState): boolean {
  return !!state.turn && !state.turn.cancelled
}
