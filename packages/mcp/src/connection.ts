import { defineTool, type ToolDefinition, type ToolRegistry } from '@dsh/core'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ErrorCode, McpError, type Tool, type ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'
import type { ServerSpec } from './config.js'
import { resultToValue, type McpCallValue } from './content.js'
import { mcpToolName } from './names.js'
import { toolParameters } from './schema.js'
import { StdioProcessTransport, type ProcessExit } from './stdio.js'

/** `restarting`: it died after being ready and its one restart is under way. */
export type McpState = 'connecting' | 'ready' | 'restarting' | 'failed' | 'closed'

/** One row of `ctx.mcp.list()`. */
export interface McpServerInfo {
  name: string
  sessionId?: string
  state: McpState
  /** Why the server is `failed`. */
  error?: string
  /** Present (true) when its config says `trusted: true`. */
  trusted?: true
  /** The model-facing names of its registered tools. */
  tools: string[]
}

/** What a connection needs from its owner. */
export interface ConnectionHost {
  tools: ToolRegistry
  /** A server failed, died, came back, or a tool could not be registered: tell the user. */
  notify(connection: McpConnection, message: string): void
  timeoutMs: number
  connectTimeoutMs: number
  killGraceMs: number
  stderrLimit: number
}

const CLIENT_INFO = { name: 'dsh', version: '0.1.0' }

function describeExit(exit: ProcessExit): string {
  return exit.code !== null ? `exited (code ${exit.code})` : `was killed by ${exit.signal ?? 'a signal'}`
}

/** The message, with its cause's when there is one (`fetch failed (connect ECONNREFUSED …)`). */
function withCause(error: unknown): string {
  const cause = (error as { cause?: unknown } | undefined)?.cause
  return cause ? `${messageOf(error)} (${messageOf(cause)})` : messageOf(error)
}

const withStderr = (stderr: string): string => (stderr ? `; stderr:\n${stderr}` : '')

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

class StartTimeout extends Error {}

/** One attempt's client and transport (a restart makes a new pair). */
interface Link { client: Client; transport: Transport }

/**
 * One MCP server: its client, its transport and its registered tools. `start()` never
 * rejects: a server that cannot start within its start timeout ends `failed` with a
 * reason and a notice. A server that dies after it was ready is a notice and is restarted
 * once; meanwhile, and for good if the restart fails, its tools stay registered and
 * answer "MCP server X stopped: reason" (the model never gets "Unknown tool" for them).
 * `close()` is the deliberate end (`closed`, tools unregistered, no notice).
 */
export class McpConnection {
  state: McpState = 'connecting'
  error: string | undefined
  private link: Link
  private readonly registrations = new Map<string, { dispose: () => void; tool: Tool }>()
  private refreshing: Promise<void> = Promise.resolve()
  /** Settles when the current start or restart attempt has ended (ready or failed). */
  private attempt: Promise<void> = Promise.resolve()
  private restarted = false

  constructor(
    readonly name: string,
    readonly spec: ServerSpec,
    readonly sessionId: string | undefined,
    private readonly host: ConnectionHost,
  ) {
    this.link = this.newLink()
  }

  /** The stdio child's pid, when there is one. */
  get pid(): number | undefined {
    const transport = this.link.transport
    return transport instanceof StdioProcessTransport ? transport.pid : undefined
  }

  get toolNames(): string[] {
    return [...this.registrations.keys()]
  }

  get trusted(): boolean {
    return this.spec.trusted === true
  }

  /** The annotations of a registered tool by model-facing name, and its server-side name. */
  toolOf(name: string): { tool: string; annotations: ToolAnnotations | undefined } | undefined {
    const entry = this.registrations.get(name)
    return entry ? { tool: entry.tool.name, annotations: entry.tool.annotations } : undefined
  }

  info(): McpServerInfo {
    return {
      name: this.name,
      ...(this.sessionId !== undefined ? { sessionId: this.sessionId } : {}),
      state: this.state,
      ...(this.error !== undefined ? { error: this.error } : {}),
      ...(this.trusted ? { trusted: true as const } : {}),
      tools: this.toolNames,
    }
  }

  /** Resolves when no start or restart is under way. */
  settled(): Promise<void> {
    return this.attempt
  }

  /** Connects, lists the tools and registers them; resolves once `ready` or `failed`. */
  start(): Promise<void> {
    this.attempt = this.connect().then(async (outcome) => {
      if (this.state !== 'connecting') return
      if (outcome.ok) {
        this.state = 'ready'
        this.registerTools(outcome.tools)
      } else {
        await this.fail(`could not start: ${outcome.reason}`)
      }
    })
    return this.attempt
  }

  /** Ends a connection that must not start (bad spec, duplicate name) as `failed`, with a notice. */
  refuse(reason: string): Promise<void> {
    return this.fail(reason)
  }

  /** Deliberate end: unregisters the tools and closes the client (a stdio child is stopped, with its group). */
  async close(): Promise<void> {
    if (this.state === 'closed') return
    this.state = 'closed'
    this.unregisterAll()
    await this.shutdown(this.link)
  }

  /** Calls an MCP tool by its server-side name. Rejects only when `signal` aborted the call. */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallValue> {
    if (this.state === 'restarting' || this.state === 'connecting') {
      await Promise.race([this.attempt, new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))])
      signal.throwIfAborted()
    }
    if (this.state !== 'ready') return failure(this.stoppedMessage())
    const timeout = this.spec.timeoutMs ?? this.host.timeoutMs
    const link = this.link
    try {
      const result = await link.client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout })
      return resultToValue(result)
    } catch (error) {
      if (signal.aborted) throw error
      const exit = exitInfo(link.transport)
      if (exit) {
        return failure(`MCP server ${this.name} stopped during the call: ${exit.what}.${exit.stderr ? `\nIts stderr ended with:\n${exit.stderr}` : ''}`)
      }
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        return failure(`MCP server ${this.name} did not answer within ${timeout / 1000} s; the call was cancelled.`)
      }
      if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
        return failure(`MCP server ${this.name} closed the connection during the call.`)
      }
      return failure(`MCP server ${this.name} failed the call: ${withCause(error)}`)
    }
  }

  private stoppedMessage(): string {
    if (this.state === 'closed') return `MCP server ${this.name} was shut down.`
    return `MCP server ${this.name} stopped: ${this.error ?? this.state}. Its tools cannot be used in this run.`
  }

  private newLink(): Link {
    const spec = this.spec
    const transport = spec.type === 'stdio'
      ? new StdioProcessTransport({
        command: spec.command, args: spec.args, env: spec.env, killGraceMs: this.host.killGraceMs, stderrLimit: this.host.stderrLimit,
        ...(spec.cwd ? { cwd: spec.cwd } : {}),
      })
      : new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers } })
    const client = new Client(CLIENT_INFO, {
      listChanged: { tools: { autoRefresh: false, debounceMs: 50, onChanged: () => { void this.refresh() } } },
    })
    const link = { client, transport }
    client.onclose = () => this.onTransportClosed(link)
    return link
  }

  /** One attempt on the current link, bounded as a whole by the start timeout. */
  private async connect(): Promise<{ ok: true; tools: Tool[] } | { ok: false; reason: string }> {
    const link = this.link
    const limit = this.spec.connectTimeoutMs ?? this.host.connectTimeoutMs
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new StartTimeout()), limit) })
    try {
      const tools = await Promise.race([
        (async () => {
          await link.client.connect(link.transport, { timeout: limit })
          return this.listTools(link, limit)
        })(),
        deadline,
      ])
      return { ok: true, tools }
    } catch (error) {
      const reason = error instanceof StartTimeout
        ? `no answer within ${limit / 1000} s (start timeout)`
        : exitInfo(link.transport)?.what ?? this.describeStartError(error, limit)
      const stderr = stderrTail(link.transport)
      // Stopping a hung child takes its grace periods: report now; `close()` awaits the same stop.
      void this.shutdown(link)
      return { ok: false, reason: `${reason}${withStderr(stderr)}` }
    } finally {
      clearTimeout(timer)
    }
  }

  private describeStartError(error: unknown, limit: number): string {
    const spec = this.spec
    const code = (error as NodeJS.ErrnoException | undefined)?.code
    if (spec.type === 'stdio' && code === 'ENOENT') return `command not found: ${spec.command}`
    if (spec.type === 'stdio' && code === 'EACCES') return `command not executable: ${spec.command}`
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) return `no answer within ${limit / 1000} s (start timeout)`
    return withCause(error)
  }

  /** The live link closed: a death while ready is reported and restarted once. */
  private onTransportClosed(link: Link): void {
    // While connecting, connect() reports; a replaced link or close() reports nothing.
    if (this.state !== 'ready' || link !== this.link) return
    const exit = exitInfo(link.transport)
    const reason = exit ? `${exit.what}${withStderr(exit.stderr)}` : 'closed the connection'
    void this.shutdown(link)
    if (this.restarted) {
      const final = `${reason} (it was restarted once already)`
      void this.fail(final, `stopped: ${final}`)
      return
    }
    this.restarted = true
    this.state = 'restarting'
    this.error = reason
    this.host.notify(this, `MCP server ${this.name} stopped: ${reason}; restarting it once`)
    this.link = this.newLink()
    this.attempt = this.connect().then(async (outcome) => {
      if (this.state !== 'restarting') return
      if (outcome.ok) {
        this.state = 'ready'
        this.error = undefined
        this.unregisterAll()
        this.registerTools(outcome.tools)
        this.host.notify(this, `MCP server ${this.name} was restarted and is ready again`)
      } else {
        const final = `${reason}; the restart failed: ${outcome.reason}`
        await this.fail(final, `stopped: ${final}`)
      }
    })
  }

  /** Marks the server failed with the notice `MCP server <name> <phrase>`. Tools it had stay registered and answer the reason. */
  private fail(reason: string, phrase = reason): Promise<void> {
    if (this.state === 'failed' || this.state === 'closed') return Promise.resolve()
    this.state = 'failed'
    this.error = reason
    this.host.notify(this, `MCP server ${this.name} ${phrase}`)
    // not awaited: waiters learn the failure now; `close()` awaits the same stop
    void this.shutdown(this.link)
    return Promise.resolve()
  }

  /** Closes the client; a stdio child is then awaited until gone (its close is idempotent). */
  private async shutdown(link: Link): Promise<void> {
    await link.client.close().catch(() => undefined)
    if (link.transport instanceof StdioProcessTransport) await link.transport.close()
  }

  private async listTools(link: Link, timeout: number): Promise<Tool[]> {
    const tools: Tool[] = []
    let cursor: string | undefined
    do {
      const page = await link.client.listTools(cursor ? { cursor } : {}, { timeout })
      tools.push(...page.tools)
      cursor = page.nextCursor
    } while (cursor)
    return tools
  }

  /** The server said its tools changed: re-list and re-register (serialised). */
  private refresh(): Promise<void> {
    this.refreshing = this.refreshing.then(async () => {
      if (this.state !== 'ready') return
      let tools: Tool[]
      try {
        tools = await this.listTools(this.link, this.spec.connectTimeoutMs ?? this.host.connectTimeoutMs)
      } catch (error) {
        if (this.state === 'ready') this.host.notify(this, `MCP server ${this.name}: re-listing its tools failed: ${messageOf(error)}`)
        return
      }
      if (this.state !== 'ready') return
      this.unregisterAll()
      this.registerTools(tools)
    })
    return this.refreshing
  }

  private registerTools(tools: readonly Tool[]): void {
    const taken = new Set<string>()
    const refused: string[] = []
    for (const tool of tools) {
      const name = mcpToolName(this.name, tool.name, taken)
      taken.add(name)
      try {
        const dispose = this.host.tools.register(this.definition(name, tool), this.sessionId !== undefined ? { sessionId: this.sessionId } : {})
        this.registrations.set(name, { dispose, tool })
      } catch (error) {
        refused.push(`${tool.name} (${messageOf(error)})`)
      }
    }
    if (refused.length) this.host.notify(this, `MCP server ${this.name}: tools not registered: ${refused.join('; ')}`)
  }

  private unregisterAll(): void {
    for (const { dispose } of this.registrations.values()) dispose()
    this.registrations.clear()
  }

  private definition(name: string, tool: Tool): ToolDefinition<any, McpCallValue> {
    const label = tool.title ?? tool.annotations?.title ?? tool.name
    return defineTool({
      name,
      description: tool.description ?? `${label} (a tool of the MCP server ${this.name}).`,
      parameters: toolParameters(tool.inputSchema),
      concurrencySafe: tool.annotations?.readOnlyHint === true,
      execute: (args: Record<string, unknown>, call) => this.call(tool.name, args, call.signal),
      output: { render: (value) => value.content, isError: (value) => value.isError },
      presentCall: () => ({ card: 'generic', title: `${label} (MCP: ${this.name})`, kind: 'other' }),
    })
  }
}

/** How a stdio child ended and the tail of its stderr; undefined while it runs, and for HTTP. */
function exitInfo(transport: Transport): { what: string; stderr: string } | undefined {
  if (!(transport instanceof StdioProcessTransport) || !transport.exit) return undefined
  return { what: describeExit(transport.exit), stderr: stderrTail(transport) }
}

function stderrTail(transport: Transport): string {
  return transport instanceof StdioProcessTransport ? transport.stderr.toString() : ''
}

const failure = (message: string): McpCallValue => ({ content: [{ type: 'text', text: message }], isError: true })
