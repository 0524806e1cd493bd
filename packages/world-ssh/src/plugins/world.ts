import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { WorldService } from '../service.js'

/** `ctx.worlds`: per-session execution worlds over SSH (declares `world/select`). */
export const name = '@dsh/world-ssh/world'
export const inject = ['sessions', 'tools', 'shell']
export const Config = z.object({
  keepaliveMs: z.number().int().positive().default(5000),
  readyTimeoutMs: z.number().int().positive().default(15_000),
  killGraceMs: z.number().int().min(0).default(2000),
  bashPath: z.string().default('bash'),
  defaultTimeoutMs: z.number().int().min(0).default(120_000),
  maxBytes: z.number().int().positive().default(30_000),
  maxLines: z.number().int().positive().default(400),
})
export type Config = z.output<typeof Config>

export function apply(ctx: Context, config: Config): void {
  ctx.sessions.defineEventType('world/select')
  new WorldService(ctx, config)
}
