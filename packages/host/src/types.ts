import type { z } from 'zod'
import type { CLIENT_REQUESTS, ClientRequestName, MethodName, NOTIFICATIONS, NotificationName, ParamsOf, ResultOf } from '@dsh/host-api'

export type NotificationParams<N extends NotificationName> = z.input<typeof NOTIFICATIONS[N]['params']>
export type ClientRequestParams<M extends ClientRequestName> = z.output<typeof CLIENT_REQUESTS[M]['params']>
export type ClientRequestResult<M extends ClientRequestName> = z.input<typeof CLIENT_REQUESTS[M]['result']>

/** What a connected surface can answer. */
export interface ClientCapabilities {
  /** Answers `approval/request`; without it every approval is denied with a reason (the headless rule). */
  approvals: boolean
  /** Answers `question/request`; without it the `question` tool is not offered to its sessions. */
  questions: boolean
  /** Executes client-defined tools (`tool/call`); without it `session/create {tools}` is refused. */
  tools: boolean
}

/**
 * A surface's side of a connection (headless, an ACP connection, an SDK stdio peer, a web
 * tab group). The host calls it; it never calls the host back synchronously.
 * - `notify` receives `session/event` (durable events only, each once, in seq order, for
 *   the sessions this client is subscribed to), `session/status` and `session/output`.
 * - `request` puts a server→client request to the client (only for sessions it owns, and
 *   only of a kind its capabilities declare). `signal` aborts when the question is no
 *   longer pending (the turn was cancelled, the session closed); a rejection is treated as
 *   "reject" for approvals and questions and as an error result for client tools.
 */
export interface HostClient {
  /** For errors, logs and /status: "headless", "acp", "sdk:<client name>", "web". */
  readonly name: string
  readonly capabilities: ClientCapabilities
  notify<N extends NotificationName>(method: N, params: NotificationParams<N>): void
  request<M extends ClientRequestName>(method: M, params: ClientRequestParams<M>, signal: AbortSignal): Promise<ClientRequestResult<M>>
}

/**
 * One client's handle on the host. `call` validates `params` against the method table
 * (DshError INVALID_PARAMS with `data.issues` naming each field) and runs the operation
 * on behalf of this client: sessions it creates or opens are owned by it and subscribed
 * from their durable end. `close` cancels and closes the sessions it owns (logs flushed,
 * locks released), aborts its pending requests, and stops its notifications.
 */
export interface HostConnection {
  readonly id: string
  call<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>
  /** The same, for params not yet validated (carriers pass the wire's JSON here). */
  callUnchecked(method: string, params: unknown): Promise<unknown>
  close(): Promise<void>
}
