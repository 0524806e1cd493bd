import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { LlmService } from '../llm/service.js'

export const name = 'llm'
export const inject = ['credentials']
export const Config = z.object({
  provider: z.string().optional(),
  model: z.string().optional(),
  /** Fail an attempt after this long without a stream byte. */
  idleTimeoutMs: z.number().int().positive().optional(),
}).default({})

export function apply(ctx: Context, config: z.output<typeof Config>): void {
  new LlmService(ctx, config, (provider, envVar) => ctx.credentials.getApiKey(provider, envVar))
}
