import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { runBatch } from '../batch/runner.js'

/** The `dsh batch` surface: claims the process, runs the task list, exits with its code. */
export const name = '@dsh/world-ssh/batch'
export const inject = ['launcher', 'sessions', 'agents', 'llm', 'tools', 'permission', 'settings']
export const Config = z.object({}).default({})

export function apply(ctx: Context): void {
  ctx.launcher.runToExit(() => runBatch(ctx))
}
