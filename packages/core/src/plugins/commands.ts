import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { clearCommand, modelCommand, permissionCommand, statusCommand } from '../commands/builtins.js'
import { CommandRegistry } from '../commands/registry.js'

export const name = 'commands'
export const inject = ['sessions']
export const Config = z.object({
  /** Register the built-ins /status, /model, /permission and /clear (they also need `llm` and `permission`). */
  builtins: z.boolean().default(true),
}).default({ builtins: true })

/**
 * `ctx.commands` plus the built-in commands. Other plugins add theirs with
 * `ctx.inject(['commands'], (c) => c.commands.register(spec))` (plan adds /plan,
 * presets /agent, compaction /compact, skills /<skill>).
 */
export function apply(ctx: Context, config: z.output<typeof Config>): void {
  ctx.sessions.defineEventType('command/run')
  new CommandRegistry(ctx)
  if (!config.builtins) return
  ctx.inject(['commands', 'llm', 'permission'], (c) => {
    c.commands.register(statusCommand(c))
    c.commands.register(modelCommand(c))
    c.commands.register(permissionCommand(c))
    c.commands.register(clearCommand())
  })
}

// For surfaces that import the plugin module (headless): the parser and the service type.
export { CommandRegistry, parseCommand } from '../commands/registry.js'
export type { CommandContext, CommandResult, CommandSpec, ExecutedCommand } from '../commands/registry.js'
