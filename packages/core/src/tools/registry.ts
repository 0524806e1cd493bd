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
  private readonly tools = new Map<string, { tool: ToolDefinition; schema: ToolSchema }>()
  private readonly guardList: ToolGuard[] = []

  constructor(ctx: Context) {
    super(ctx, 'tools')
  }

  register(tool: ToolDefinition<any, any>): () => void {
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) {
      throw new DshError('INVALID_TOOL', `tool name "${tool.name}" must be 1-64 letters, digits, '_' or '-'`)
    }
    if (this.tools.has(tool.name)) throw new DshError('DUPLICATE_TOOL', `a tool named "${tool.name}" is already registered`)
    const entry = { tool, schema: toolSchema(tool) }
    this.tools.set(tool.name, entry)
    this.ctx.emit('tools/changed')
    return () => {
      if (this.tools.get(tool.name) !== entry) return
      this.tools.delete(tool.name)
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

  get(name: string): ToolDefinition | undefined {
    return this.tools.get(name)?.tool
  }

  names(): string[] {
    return [...this.tools.keys()]
  }

  /** Schemas for the model, in registration order, optionally filtered by name. */
  schemas(filter?: (name: string) => boolean): ToolSchema[] {
    const out: ToolSchema[] = []
    for (const [name, entry] of this.tools) if (!filter || filter(name)) out.push(entry.schema)
    return out
  }
}
