import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { LocalShell } from '../shell/local.js'
import { routed } from '../world.js'

export const name = '@dsh/exec/shell'
export const inject = ['subprocess', 'sandbox']
export const Config = z.object({
  bashPath: z.string().default('bash'),
  /** Used when a run gives none; 0 disables it. */
  defaultTimeoutMs: z.number().int().min(0).default(120_000),
  /** The in-memory tail the model sees; beyond it the stream is spilled to a file. */
  maxBytes: z.number().int().positive().default(30_000),
  maxLines: z.number().int().positive().default(400),
  env: z.object({
    /** Names kept although they look secret. */
    allow: z.array(z.string()).default([]),
    /** Extra regular expressions (case-insensitive) of names to drop. */
    deny: z.array(z.string()).default([]),
  }).prefault({}),
})
export type Config = z.output<typeof Config>

export function apply(ctx: Context, config: Config): void {
  const local = new LocalShell(ctx, ctx.subprocess, ctx.sandbox, config)
  ctx.reflect.set('shell', routed('shell', local))
}
