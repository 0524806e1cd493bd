import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { MemorySessionStore } from '../session/memory.js'

/** `ctx.sessionStore` in memory (tests, ephemeral runs): nothing is written to disk. */
export const name = 'memory-store'
export const inject: string[] = []
export const Config = z.object({}).strict().default({})

export function apply(ctx: Context, _config: z.output<typeof Config>): void {
  new MemorySessionStore(ctx)
}
