import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { todoWriteTool } from '../todo.js'

/** todo_write: the plan, logged as an ignorable `todo/write` event holding the full snapshot. */
export const name = '@dsh/tools-builtin/todo'
export const inject = ['tools']
export const Config = z.object({})
export type Config = z.output<typeof Config>

export function apply(ctx: Context, _config: Config): void {
  ctx.effect(() => ctx.tools.register(todoWriteTool))
}
