import { defineTool, type ToolDefinition, type ToolRegistry } from '@dsh/core'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js'
import type { ServerSpec } from './config.js'
import { resultToValue, type McpCallValue } from './content.js'
import { mcpToolName } from './names.js'
import { toolParameters } from './schema.js'
import { StdioProcessTransport, type ProcessExit } from './stdio.js'

export type McpState = 'connecting' | 'ready' | 'failed' | 'closed'

/** One row of `ctx.mcp.list()`. */
export interface McpServerInfo {
  name: string
  sessionId?: string
  state: McpState
  /** Why the server is `failed`. */
  error?: string
  /** The model-facing names of its registered tools. */
  tools: string[]
}

/** What a connection needs from its owner. */
export interface ConnectionHost {
  tools: ToolRegistry
  /** A server failed or a tool could not be registered: tell the user. */
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

/**
 * One MCP server: its client, its transport and its registered tools. `start()` never
 * rejects: a server that cannot start, or later dies, ends `failed` with a reason and a
 * notice, and its tools are unregistered. `close()` is the deliberate end (`closed`, no
 * notice). A call in flight when the server dies resolves with an error value that
 * names the server.
 */
export class McpConnection {
  state: McpState = 'connecting'
  error: string | undefined
  private readonly client: Client
  private readonly transport: Transport
  private readonly registrations = new Map<string, () => void>()
  private refreshing: Promise<void> = Promise.resolve()

  constructor(
    readonly name: string,
    readonly spec: ServerSpec,
    readonly sessionId: string | undefined,
    private readonly host: ConnectionHost,
  ) {
    this.transport = spec.type === 'stdio'
      ? new StdioProcessTransport({
        command: spec.command, args: spec.args, env: spec.env, killGraceMs: host.killGraceMs, stderrLimit: host.stderrLimit,
        ...(spec.cwd ? { cwd: spec.cwd } : {}),
      })
      : new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers } })
    this.client = new Client(CLIENT_INFO, {
      listChanged: { tools: { autoRefresh: false, debounceMs: 50, onChanged: () => { void this.refresh() } } },
    })
    this.client.onclose = () => this.onTransportClosed()
  }

  /** The stdio child's pid, when there is one. */
  get pid(): number | undefined {
    return this.transport instanceof StdioProcessTransport ? this.transport.pid : undefined
  }

  get toolNames(): string[] {
    return [...this.registrations.keys()]
  }

  info(): McpServerInfo {
    return {
      name: this.name,
      ...(this.sessionId !== undefined ? { sessionId: this.sessionId } : {}),
      state: this.state,
      ...(this.error !== undefined ? { error: this.error } : {}),
      tools: this.toolNames,
    }
  }

  /** Connects, lists the tools and registers them; resolves once `ready` or `failed`. */
  async start(): Promise<void> {
    try {
      await this.client.connect(this.transport, { timeout: this.host.connectTimeoutMs })
      const tools = await this.listTools()
      if (this.state !== 'connecting') return
      this.state = 'ready'
      this.registerTools(tools)
    } catch (error) {
      if (this.state !== 'connecting') return
      const what = this.exitInfo()?.what ?? this.describeStartError(error)
      await this.fail(`could not start: ${what}${withStderr(this.stderrTail())}`)
    }
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
    await this.shutdown()
  }

  /** Calls an MCP tool by its server-side name. Rejects only when `signal` aborted the call. */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallValue> {
    if (this.state !== 'ready') {
      return failure(`MCP server ${this.name} is not available (${this.state}${this.error ? `: ${this.error}` : ''}).`)
    }
    const timeout = this.spec.timeoutMs ?? this.host.timeoutMs
    try {
      const result = await this.client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout })
      return resultToValue(result)
    } catch (error) {
      if (signal.aborted) throw error
      const exit = this.exitInfo()
      if (exit) {
        return failure(`MCP server ${this.name} ${exit.what} during the call; its tools are no longer available.${exit.stderr ? `\nIts stderr ended with:\n${exit.stderr}` : ''}`)
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

  /** How a stdio child ended and the tail of its stderr; undefined while it runs, and for HTTP. */
  private exitInfo(): { what: string; stderr: string } | undefined {
    if (!(this.transport instanceof StdioProcessTransport) || !this.transport.exit) return undefined
    return { what: describeExit(this.transport.exit), stderr: this.stderrTail() }
  }

  private stderrTail(): string {
    return this.transport instanceof StdioProcessTransport ? this.transport.stderr.toString() : ''
  }

  private describeStartError(error: unknown): string {
    const spec = this.spec
    const code = (error as NodeJS.ErrnoException | undefined)?.code
    if (spec.type === 'stdio' && code === 'ENOENT') return `command not found: ${spec.command}`
    if (spec.type === 'stdio' && code === 'EACCES') return `command not executable: ${spec.command}`
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return `no answer to initialize within ${this.host.connectTimeoutMs / 1000} s`
    }
    return withCause(error)
  }

  private onTransportClosed(): void {
    // While connecting, start()'s catch reports; after close() nothing is reported.
    if (this.state !== 'ready') return
    const exit = this.exitInfo()
    void this.fail(exit ? `${exit.what}${withStderr(exit.stderr)}` : 'closed the connection')
  }

  private async fail(reason: string): Promise<void> {
    if (this.state === 'failed' || this.state === 'closed') return
    this.state = 'failed'
    this.error = reason
    this.unregisterAll()
    this.host.notify(this, `MCP server ${this.name} ${reason}`)
    await this.shutdown()
  }

  /** Closes the client; a stdio child is then awaited until gone (its close is idempotent). */
  private async shutdown(): Promise<void> {
    await this.client.close().catch(() => undefined)
    if (this.transport instanceof StdioProcessTransport) await this.transport.close()
  }

  private async listTools(): Promise<Tool[]> {
    const tools: Tool[] = []
    let cursor: string | undefined
    do {
      const page = await this.client.listTools(cursor ? { cursor } : {}, { timeout: this.host.connectTimeoutMs })
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
        tools = await this.listTools()
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
        this.registrations.set(name, dispose)
      } catch (error) {
        refused.push(`${tool.name} (${messageOf(error)})`)
      }
    }
    if (refused.length) this.host.notify(this, `MCP server ${this.name}: tools not registered: ${refused.join('; ')}`)
  }

  private unregisterAll(): void {
    for (const dispose of this.registrations.values()) dispose()
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

const failure = (message: string): McpCallValue => ({ content: [{ type: 'text', text: message }], isError: true })
