import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { runHeadless } from '../runner.js'

export const name = 'headless'
export const inject = ['launcher', 'host']
export const Config = z.object({}).default({})

/** Claims the process, runs one task, exits with its code. */
export function apply(ctx: Context): void {
  ctx.launcher.runToExit(() => runHeadless(ctx))
}
