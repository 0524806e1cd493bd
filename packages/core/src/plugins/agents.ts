import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { AgentService } from '../agent/service.js'

export const name = 'agents'
export const inject = ['llm', 'tools', 'prompt', 'permission', 'approval']
export const Config = z.object({
  /** Steps per turn before it ends with `max-steps`. */
  maxSteps: z.number().int().positive().default(200),
}).default({ maxSteps: 200 })

export function apply(ctx: Context, config: z.output<typeof Config>): void {
  new AgentService(ctx, { maxSteps: config.maxSteps })
}
