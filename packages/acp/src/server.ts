import type * as acp from '@agentclientprotocol/sdk/unstable'
import { Service, type Context } from '@deepseek-ai/cordis'
import type { AcpDefaults } from './args.js'
import { Bridge } from './bridge.js'

declare module '@deepseek-ai/cordis' {
  interface Context { acpServer: AcpServer }
}

export interface AcpServerConfig {
  defaults: AcpDefaults
  pageSize: number
  version: string
}

export interface ConnectOptions {
  /** Overrides of the server's session defaults for this connection (a transport's flags). */
  defaults?: AcpDefaults
  /** Frame-level diagnostics; never stdout. */
  debug?: (line: string) => void
}

/** A live ACP connection. */
export interface AcpConnectionHandle {
  /** Resolves when the connection has closed and its sessions are closed (locks released). */
  readonly closed: Promise<void>
  /** Closes the connection: running turns are cancelled, sessions flushed and unlocked. */
  close(): Promise<void>
}

/**
 * `ctx.acpServer`: the ACP server, transport-agnostic. `connect(stream)` serves one
 * client over a JSON-RPC message stream (ndJsonStream for stdio, or any other
 * transport); each connection has its own bridge and its own client of the host
 * (`ctx.host.connect`), which owns the sessions it opens: across connections a session is
 * open on one at a time (the host's SESSION_BUSY, shown as SESSION_LOCKED), and each
 * session's approval questions and `question` tool questions (and its subagents') go to
 * that connection (`session/request_permission`), never to another surface.
 * Note: cordis hands callers a derived object, so state lives in containers made by
 * the constructor and the plugin's own context is kept in `home`.
 */
export class AcpServer extends Service {
  private readonly home: Context
  private readonly bridges = new Set<Bridge>()

  constructor(ctx: Context, private readonly config: AcpServerConfig) {
    super(ctx, 'acpServer')
    this.home = ctx
    ctx.effect(() => () => Promise.allSettled([...this.bridges].map((bridge) => bridge.close())), 'acp: close connections')
  }

  connect(stream: acp.Stream, options: ConnectOptions = {}): AcpConnectionHandle {
    const bridge = new Bridge(this.home, {
      defaults: { ...this.config.defaults, ...options.defaults },
      pageSize: this.config.pageSize,
      version: this.config.version,
      debug: options.debug,
    })
    this.bridges.add(bridge)
    bridge.connect(stream)
    const closed = bridge.closed.then(() => bridge.close()).finally(() => this.bridges.delete(bridge))
    return { closed, close: () => bridge.close().then(() => closed) }
  }
}
