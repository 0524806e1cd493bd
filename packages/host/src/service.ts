import { Service, type Context } from '@deepseek-ai/cordis'
import { DshError } from '@dsh/protocol'
import { issuesOf, METHODS, quote, type MethodDef } from '@dsh/host-api'
import { Archive } from './archive.js'
import { Conn } from './connection.js'
import { HostCore } from './core.js'
import { HANDLERS } from './methods/index.js'
import type { HostClient, HostConnection } from './types.js'

declare module '@deepseek-ai/cordis' {
  interface Context { host: HostService }
}

/**
 * `ctx.host`: the one set of session operations every surface calls. `connect` gives a
 * client its handle; `call` validates params against the method table (INVALID_PARAMS
 * with `data.issues`) and runs the operation for that client. Disposing the plugin closes
 * every connection (and so every hosted session).
 * State lives in `core` (cordis hands callers a derived object: nothing here is reassigned).
 */
export class HostService extends Service {
  readonly core: HostCore
  private readonly counter = { n: 0 }

  constructor(ctx: Context, options: { version: string; storeDir?: string | undefined }) {
    super(ctx, 'host')
    this.core = new HostCore(ctx, Archive.beside(options.storeDir), options.version)
    ctx.on('session/closed', (session) => this.core.forget(session))
    ctx.on('agent/tool-progress', (agent, callId, update) => { if (update.type === 'output') this.core.output(agent.session.id, callId, update.data) })
    ctx.effect(() => () => Promise.allSettled([...this.core.conns].map((c) => c.close())).then(() => undefined), 'host: close connections')
  }

  connect(client: HostClient): HostConnection {
    const conn = new Conn(`c${++this.counter.n}`, client, {
      dispatch: (c, method, params) => this.dispatch(c, method, params),
      disconnect: (c) => this.disconnect(c),
    })
    this.core.conns.add(conn)
    return conn
  }

  private async dispatch(conn: Conn, method: string, params: unknown): Promise<unknown> {
    if (conn.closed) throw new DshError('CONNECTION_CLOSED', `connection ${conn.id} (${conn.client.name}) is closed`)
    const def = Object.hasOwn(METHODS, method) ? (METHODS as Record<string, MethodDef>)[method] : undefined
    const handler = def ? HANDLERS[method as keyof typeof HANDLERS] : undefined
    if (!def || !handler) throw new DshError('METHOD_NOT_FOUND', `unknown method ${quote(method, 60)}`, { hint: 'rpc/describe lists the methods' })
    const parsed = def.params.safeParse(params === undefined || params === null ? {} : params)
    if (!parsed.success) {
      const issues = issuesOf(parsed.error)
      throw new DshError('INVALID_PARAMS', `invalid params for ${method}: ${issues.slice(0, 5).map((i) => `${i.path}: ${i.message}`).join('; ')}`, { data: { issues } })
    }
    return handler(this.core, conn, parsed.data)
  }

  /** Closes what the client owns (cancelled, flushed, unlocked), withdraws its requests, stops its notifications. */
  private async disconnect(conn: Conn): Promise<void> {
    conn.closed = true
    this.core.conns.delete(conn)
    const owned = [...this.core.hosted.values()].filter((h) => h.owner === conn)
    for (const hosted of this.core.hosted.values()) {
      hosted.abandon(conn)
      hosted.unsubscribe(conn)
    }
    const results = await Promise.allSettled(owned.map((h) => this.core.release(h)))
    for (const r of results) if (r.status === 'rejected') this.ctx.logger('host').warn('closing a session of %s: %s', conn.client.name, r.reason)
  }
}
