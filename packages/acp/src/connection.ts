import type * as acp from '@agentclientprotocol/sdk/unstable'
import type { Context } from '@deepseek-ai/cordis'
import type { HostConnection } from '@dsh/host'
import type { AcpDefaults } from './args.js'
import type { CancelEpochs } from './cancels.js'
import type { SessionState } from './state.js'
import type { SessionTable } from './table.js'
import type { Presenter } from './translate.js'

export interface ConnectionOptions {
  /** Session defaults of this process (flags and DSH_* env). */
  defaults: AcpDefaults
  /** `session/list` page size. */
  pageSize: number
  /** The dsh version reported in `initialize`. */
  version: string
  /** Frame-level diagnostics (DSH_ACP_DEBUG=1); never stdout. */
  debug?: ((line: string) => void) | undefined
}

/**
 * One ACP connection as the request handlers (sessions, turns, auth, permission) see it.
 * Implemented by the Bridge, which composes the pieces; the handlers import this
 * interface only, never the Bridge. Sessions live on the host (`host`, this connection's
 * `ctx.host.connect` handle, which owns them); the table keeps what ACP adds.
 */
export interface AcpConnection {
  readonly ctx: Context
  readonly options: ConnectionOptions
  /** This connection's client of the host: every session operation goes through it. */
  readonly host: HostConnection
  /** The sessions open on this connection. */
  readonly sessions: SessionTable
  /** Cancel counts per session, in arrival order. */
  readonly epochs: CancelEpochs
  /** Fallback cards for events the host sent without a view. */
  readonly presenter: Presenter
  /** What the client declared in `initialize`. */
  readonly caps: acp.ClientCapabilities
  /** Set by `gateway` authentication: the provider new sessions use on this connection. */
  providerOverride: string | undefined
  /** The client side of the connection (requests and notifications to the client). */
  readonly client: acp.AgentContext
  /** The client declared Zed's terminal cards (seed 000). */
  readonly terminalCards: boolean
  /** Queues a `session/update` behind every earlier one. */
  send(sessionId: string, update: acp.SessionUpdate): void
  /** Resolves once every update queued so far is written. */
  flush(): Promise<void>
  /** Runs `dispose` when the connection closes. */
  own(dispose: () => unknown): void
  debug(line: string): void
  /** Feeds a state just put into the table what the host sent of its session before it existed. */
  adopted(state: SessionState): void
  sendCommands(state: SessionState): void
  sendConfig(state: SessionState): void
  sendNotice(state: SessionState, level: string, message: string): void
}
