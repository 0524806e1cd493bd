import { Service, type Context } from '@deepseek-ai/cordis'
import { DshError, type ToolSchema } from '@dsh/protocol'
import type { ToolDefinition } from './define.js'
import type { ToolGuard } from './pipeline.js'
import { toolSchema } from './schema.js'

declare module '@deepseek-ai/cordis' {
  interface Context { tools: ToolRegistry }
  interface Events {
    /** The set of registered tools changed (surfaces refresh, prompts rebuild). */
    'tools/changed'(): void
  }
}

/**
 * `ctx.tools`: the registry of tool definitions and guards. Registrations are effects:
 * the returned disposer (or the registering plugin's unload) removes them.
 */
export class ToolRegistry extends Service {
  private readonly tools = new Map<string, { tool: ToolDefinition; schema: ToolSchema; owner: Context; sessionId?: string }>()
  private readonly guardList: ToolGuard[] = []

  constructor(ctx: Context) {
    super(ctx, 'tools')
  }

  /** Registers a tool for every session, or only for `options.sessionId` (per-session MCP servers). */
  register(tool: ToolDefinition<any, any>, options: { sessionId?: string } = {}): () => void {
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) {
      throw new DshError('INVALID_TOOL', `tool name "${tool.name}" must be 1-64 letters, digits, '_' or '-'`)
    }
    const key = options.sessionId ? `${options.sessionId}\u0000${tool.name}` : tool.name
    if (this.tools.has(key) || (options.sessionId && this.tools.has(tool.name))) {
      throw new DshError('DUPLICATE_TOOL', `a tool named "${tool.name}" is already registered`)
    }
    // `this.ctx` is the registering plugin's context (cordis traces service access): the tool's
    // body later runs with it as `call.ctx`, so it reaches exactly the seams its plugin injects.
    const entry = { tool, schema: toolSchema(tool), owner: this.ctx, ...(options.sessionId ? { sessionId: options.sessionId } : {}) }
    this.tools.set(key, entry)
    this.ctx.emit('tools/changed')
    return () => {
      if (this.tools.get(key) !== entry) return
      this.tools.delete(key)
      this.ctx.emit('tools/changed')
    }
  }

  /** Guards run after approval and may only deny. */
  guard(guard: ToolGuard): () => void {
    this.guardList.push(guard)
    return () => {
      const index = this.guardList.indexOf(guard)
      if (index >= 0) this.guardList.splice(index, 1)
    }
  }

  get guards(): readonly ToolGuard[] {
    return this.guardList
  }

  /** A tool visible to the session (global, or registered for it). */
  get(name: string, sessionId?: string): ToolDefinition | undefined {
    return this.visible(name, sessionId)?.tool
  }

  /** The context of the plugin that registered the tool. */
  owner(name: string, sessionId?: string): Context | undefined {
    return this.visible(name, sessionId)?.owner
  }

  names(sessionId?: string): string[] {
    return [...this.tools.values()].filter((e) => !e.sessionId || e.sessionId === sessionId).map((e) => e.tool.name)
  }

  /** Schemas for the model, in registration order: global tools and the session's own, optionally filtered by name. */
  schemas(filter?: (name: string) => boolean, sessionId?: string): ToolSchema[] {
    const out: ToolSchema[] = []
    for (const entry of this.tools.values()) {
      if (entry.sessionId && entry.sessionId !== sessionId) continue
      if (!filter || filter(entry.tool.name)) out.push(entry.schema)
    }
    return out
  }

  /** The global entry of `name`, else the session's own. */
  private visible(name: string, sessionId?: string) {
    return this.tools.get(name) ?? (sessionId ? this.tools.get(`${sessionId}\u0000${name}`) : undefined)
  }
}
