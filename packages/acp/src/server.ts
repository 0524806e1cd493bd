import type * as acp from '@agentclientprotocol/sdk/unstable'
import { Service, type Context } from '@deepseek-ai/cordis'
import type { Session } from '@dsh/core'
import { DshError, type ApprovalOutcome, type ApprovalRequest, type SessionHeader } from '@dsh/protocol'
import type { AcpDefaults } from './args.js'
import { Bridge } from './bridge.js'
import type { AcpConnection, SessionOwners } from './connection.js'
import { askPermission } from './permission.js'

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
 * transport); each connection has its own bridge. Across connections a session is
 * open on one at a time. The server answers the tree's approval questions by routing
 * them to the connection that owns the session (`session/request_permission`).
 * Note: cordis hands callers a derived object, so state lives in containers made by
 * the constructor and the plugin's own context is kept in `home`.
 */
export class AcpServer extends Service {
  private readonly home: Context
  private readonly bridges = new Set<Bridge>()
  private readonly owners = new Map<string, AcpConnection>()
  private readonly ownership: SessionOwners

  constructor(ctx: Context, private readonly config: AcpServerConfig) {
    super(ctx, 'acpServer')
    this.home = ctx
    this.ownership = {
      claim: (sessionId, bridge) => {
        const owner = this.owners.get(sessionId)
        if (owner && owner !== bridge) {
          throw new DshError('SESSION_LOCKED', `session ${sessionId} is open on another ACP connection of this process`, {
            hint: 'close it there (session/close) first', data: { sessionId },
          })
        }
        this.owners.set(sessionId, bridge)
      },
      release: (sessionId, bridge) => {
        if (this.owners.get(sessionId) === bridge) this.owners.delete(sessionId)
      },
    }
    ctx.effect(() => ctx.approval.setAnswerer((session, request, signal) => this.answer(session, request, signal)), 'acp: approval answerer')
    ctx.effect(() => () => Promise.allSettled([...this.bridges].map((bridge) => bridge.close())), 'acp: close connections')
  }

  connect(stream: acp.Stream, options: ConnectOptions = {}): AcpConnectionHandle {
    const bridge = new Bridge(this.home, this.ownership, {
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

  /**
   * Asks the connection that owns the session. A subagent's session is owned by nobody:
   * its question goes up the parent chain to the session the user is looking at, attached
   * to the parent's `task` call (the card the editor shows).
   */
  private answer(session: Session, request: ApprovalRequest & { id: string }, signal: AbortSignal): Promise<ApprovalOutcome> {
    let target: Session | undefined = session
    let asked = request
    while (target && !this.owners.has(target.id)) {
      const parent: SessionHeader['parent'] = target.header.parent
      if (!parent || parent.fork) return Promise.resolve('reject')
      asked = { ...asked, ...(parent.callId ? { callId: parent.callId } : {}) }
      target = this.home.sessions.get(parent.id)
    }
    const bridge = target && this.owners.get(target.id)
    const state = target && bridge?.sessions.get(target.id)
    if (!bridge || !state) return Promise.resolve('reject')
    return askPermission(bridge, state, asked, signal)
  }
}
