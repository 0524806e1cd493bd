import { Service, type Context } from '@deepseek-ai/cordis'
import type { PermissionService, PreDecision, Session, SessionManager, ToolInvocation } from '@dsh/core'
import { ServerSpec, type Config, type ServerSpecInput } from './config.js'
import { mcpGate } from './policy.js'
// The SDK is loaded on the first mount, not at boot: most profiles configure no server.
import type { McpConnection, ConnectionHost, McpServerInfo } from './connection.js'

/** A user-visible report about an MCP server (start failure, death, refused tools). */
export interface McpNotice {
  server: string
  sessionId?: string
  level: 'info' | 'warn' | 'error'
  message: string
}

declare module '@deepseek-ai/cordis' {
  interface Context { mcp: McpService }
  interface Events {
    /** An MCP server failed to start, died, or had tools refused. Surfaces show it; it is never fatal. */
    'mcp/notice'(notice: McpNotice): void
  }
}

export interface MountOptions {
  /** Mount for this session only (ACP `session/new` mcpServers); its tools are visible to that session alone. */
  sessionId?: string
}

/**
 * `ctx.mcp`: the MCP servers of this process. Global servers come from the plugin's
 * config; per-session servers are mounted by surfaces. Every failure is a notice, never an
 * exception: the `mcp/notice` event and a `notice` session event in every session it
 * concerns (a global server's: every open session, and each session opened later gets the
 * notices so far; a session's own server's: that session).
 * Note: cordis hands callers a derived object, so state lives in containers made by the
 * constructor, and the plugin's own context is kept in `home`.
 */
export class McpService extends Service {
  private readonly home: Context
  private readonly connections = new Set<McpConnection>()
  private readonly state = { disposed: false }
  private readonly open = new Set<Session>()
  private readonly mounting = new Set<{ name: string; sessionId: string | undefined; trusted: boolean; done: Promise<void> }>()
  /** Notices about global servers so far, for sessions opened later. */
  private readonly globalNotices: { message: string; source: string }[] = []

  constructor(ctx: Context, private readonly config: Config) {
    super(ctx, 'mcp')
    this.home = ctx
  }

  /**
   * Connects a server and registers its tools as `mcp__<name>__<tool>` (globally, or for
   * `options.sessionId`). Never rejects: the returned connection is `ready`, or `failed`
   * with its `error` and a notice (bad spec, name already mounted in that scope, command
   * missing, initialize refused, …).
   */
  mount(name: string, spec: ServerSpecInput, options: MountOptions = {}): Promise<McpConnection> {
    const mounting = this.mountNow(name, spec, options)
    const trusted = (spec as { trusted?: unknown }).trusted === true
    const entry = { name, sessionId: options.sessionId, trusted, done: mounting.then(() => undefined, () => undefined) }
    this.mounting.add(entry)
    void entry.done.finally(() => this.mounting.delete(entry))
    return mounting
  }

  private async mountNow(name: string, spec: ServerSpecInput, options: MountOptions): Promise<McpConnection> {
    const sessionId = options.sessionId
    const parsed = ServerSpec.safeParse(spec)
    const { McpConnection } = await import('./connection.js')
    const connection = new McpConnection(name, parsed.success ? parsed.data : { type: 'stdio', command: '(invalid)', args: [], env: {}, trusted: false }, sessionId, this.host())
    this.connections.add(connection)
    if (this.state.disposed) {
      await connection.close()
      return connection
    }
    if (!parsed.success) {
      await connection.refuse(`has an invalid configuration: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`)
      return connection
    }
    const twins = this.named(name, sessionId).filter((c) => c !== connection)
    // A failed server of that name is replaced; a live one keeps the name.
    for (const twin of twins) if (twin.state === 'failed' || twin.state === 'closed') this.connections.delete(twin)
    if (twins.some((c) => c.state === 'connecting' || c.state === 'ready')) {
      await connection.refuse(`is already mounted${sessionId !== undefined ? ' for this session' : ''}`)
      return connection
    }
    await connection.start()
    return connection
  }

  /** Closes one server (by name, in the given scope) and forgets it. */
  async unmount(name: string, options: MountOptions = {}): Promise<void> {
    await this.closeEach(this.named(name, options.sessionId))
  }

  /** Closes every server mounted for `sessionId` (on session close) and forgets them. */
  async unmountSession(sessionId: string): Promise<void> {
    await this.closeEach([...this.connections].filter((c) => c.sessionId === sessionId))
  }

  list(): McpServerInfo[] {
    return [...this.connections].map((c) => c.info())
  }

  /** The connection of a server by name and scope, if mounted. */
  get(name: string, options: MountOptions = {}): McpConnection | undefined {
    return this.named(name, options.sessionId).find((c) => c.state !== 'closed')
  }

  /** Resolves when no server visible to `sessionId` (global ones, and that session's) is starting or restarting. */
  async settled(sessionId?: string): Promise<void> {
    const visible = (id: string | undefined) => id === undefined || id === sessionId
    await Promise.all([...this.mounting].filter((m) => visible(m.sessionId)).map((m) => m.done))
    await Promise.all([...this.connections].filter((c) => visible(c.sessionId)).map((c) => c.settled()))
  }

  /**
   * The permission preset's verdict on an MCP tool call (see `mcpGate`); undefined when the
   * tool is not an MCP tool or no permission service is mounted (no presets at all).
   */
  gate(call: ToolInvocation): PreDecision | undefined {
    for (const connection of this.connections) {
      if (connection.sessionId !== undefined && connection.sessionId !== call.sessionId) continue
      const tool = connection.toolOf(call.name)
      if (!tool) continue
      const permission = this.home.get('permission') as PermissionService | undefined
      if (!permission) return undefined
      const session = (this.home.get('sessions') as SessionManager | undefined)?.get(call.sessionId)
      // fail closed: a call whose session (hence preset) cannot be found asks
      const preset = session ? permission.current(session).id : '(unknown: the session is not open)'
      return mcpGate({ preset, server: connection.name, tool: tool.tool, annotations: tool.annotations, trusted: connection.trusted })
    }
    return undefined
  }

  /** The servers a session cannot use right now, one line each (for the system prompt and surfaces). */
  unavailable(sessionId: string): string[] {
    return [...this.connections]
      .filter((c) => (c.sessionId === undefined || c.sessionId === sessionId) && (c.state === 'failed' || c.state === 'restarting'))
      .map((c) => `${c.name}: ${c.state === 'restarting' ? 'restarting after it stopped' : 'stopped'} (${firstLine(c.error ?? c.state)})`)
  }

  /** `/status` lines, by name: `name: state, N tools[, trusted]`, `name: starting`, or why it failed. */
  statusLines(sessionId: string): string[] {
    const visible = (id: string | undefined) => id === undefined || id === sessionId
    const connections = [...this.connections].filter((c) => visible(c.sessionId))
    // a mount still loading the SDK has no connection yet
    const loading = [...this.mounting].filter((m) => visible(m.sessionId) && !connections.some((c) => c.name === m.name && c.sessionId === m.sessionId))
    const lines = [...loading.map((m) => `${m.name}: starting${m.trusted ? ', trusted' : ''}`), ...connections.map((c) => {
      const trusted = c.trusted ? ', trusted' : ''
      if (c.state === 'failed') return `${c.name}: failed (${firstLine(c.error ?? 'failed')})${trusted}`
      if (c.state === 'connecting') return `${c.name}: starting${trusted}`
      const count = c.toolNames.length
      return `${c.name}: ${c.state}, ${count} tool${count === 1 ? '' : 's'}${trusted}`
    })]
    return lines.sort()
  }

  /** A session was opened: it gets the global notices so far, and later ones as they come. */
  opened(session: Session): void {
    this.open.add(session)
    for (const { message, source } of this.globalNotices) appendNotice(session, message, source, this.home)
  }

  closed(session: Session): void {
    this.open.delete(session)
  }

  /** Closes every connection (plugin disposal); later mounts come back `closed`. */
  async closeAll(): Promise<void> {
    this.state.disposed = true
    await this.closeEach([...this.connections])
  }

  /** The connections of server `name` in one scope (global when `sessionId` is undefined). */
  private named(name: string, sessionId: string | undefined): McpConnection[] {
    return [...this.connections].filter((c) => c.name === name && c.sessionId === sessionId)
  }

  private async closeEach(targets: McpConnection[]): Promise<void> {
    for (const c of targets) this.connections.delete(c)
    await Promise.all(targets.map((c) => c.close()))
  }

  private host(): ConnectionHost {
    return {
      tools: this.home.tools,
      notify: (connection, message) => this.notify(connection, message),
      timeoutMs: this.config.timeoutMs,
      connectTimeoutMs: this.config.connectTimeoutMs,
      killGraceMs: this.config.killGraceMs,
      stderrLimit: this.config.stderrLimit,
    }
  }

  private notify(connection: McpConnection, message: string): void {
    if (this.state.disposed) return
    const notice: McpNotice = {
      server: connection.name,
      ...(connection.sessionId !== undefined ? { sessionId: connection.sessionId } : {}),
      level: 'warn',
      message,
    }
    // surfaces show it from the session log; the log line is for DSH_DEBUG (headless would print it twice)
    this.home.logger('mcp').info(message)
    this.home.emit('mcp/notice', notice)
    const source = `mcp:${connection.name}`
    if (connection.sessionId === undefined) {
      this.globalNotices.push({ message, source })
      for (const session of this.open) appendNotice(session, message, source, this.home)
      return
    }
    // `ctx.sessions` is optional here (cordis has no optional inject): read it when needed.
    const session = (this.home.get('sessions') as SessionManager | undefined)?.get(connection.sessionId)
    if (session) appendNotice(session, message, source, this.home)
  }
}

function appendNotice(session: Session, message: string, source: string, ctx: Context): void {
  if (session.closed) return
  try {
    session.append('notice', { level: 'warn', message, source })
  } catch (error) {
    ctx.logger('mcp').warn('could not log an MCP notice to session %s: %s', session.id, error)
  }
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? ''
  return line.length > 200 ? `${line.slice(0, 200)}…` : line
}
