import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { decideRetry } from '../agent/retry.js'

export const name = 'retry'
export const inject: string[] = []
export const Config = z.object({
  maxAttempts: z.number().int().min(1).default(5),
  baseDelayMs: z.number().int().min(0).default(500),
  maxDelayMs: z.number().int().min(0).default(30_000),
}).default({ maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 30_000 })

/** Retry policy on `agent/request-error`; each retry is logged by the agent (`llm/retry`). */
export function apply(ctx: Context, config: z.output<typeof Config>): void {
  ctx.on('agent/request-error', async (_agent, failure, attempt, next) => {
    const decision = decideRetry(config, failure, attempt)
    return decision.retry ? decision : next()
  })
}
