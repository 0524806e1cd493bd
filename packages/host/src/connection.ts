import type { MethodName, NotificationName, ParamsOf, ResultOf } from '@dsh/host-api'
import type { ClientCapabilities, HostClient, HostConnection, NotificationParams } from './types.js'

/** What a connection needs of the host. */
export interface ConnHost {
  dispatch(conn: Conn, method: string, params: unknown): Promise<unknown>
  disconnect(conn: Conn): Promise<void>
}

/**
 * One client's connection. `capabilities` start as the client declared them and may be
 * narrowed or widened by `initialize` (a carrier learns them from its peer's initialize).
 */
export class Conn implements HostConnection {
  closed = false
  capabilities: ClientCapabilities
  private closing: Promise<void> | undefined

  constructor(readonly id: string, readonly client: HostClient, private readonly host: ConnHost) {
    this.capabilities = { ...client.capabilities }
  }

  call<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    return this.host.dispatch(this, method, params) as Promise<ResultOf<M>>
  }

  callUnchecked(method: string, params: unknown): Promise<unknown> {
    return this.host.dispatch(this, method, params)
  }

  close(): Promise<void> {
    this.closing ??= this.host.disconnect(this)
    return this.closing
  }

  /** Notifies the client; a throwing client is its own problem (the event is durable regardless). */
  notify<N extends NotificationName>(method: N, params: NotificationParams<N>): void {
    if (this.closed) return
    try {
      this.client.notify(method, params)
    } catch {
      // the surface's failure to render is not the session's
    }
  }
}
