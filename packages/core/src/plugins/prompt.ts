import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { GUIDANCE, IDENTITY, PromptService, cachedReader, environmentSection, projectSection } from '../prompt/service.js'

export const name = 'prompt'
export const inject: string[] = []
export const Config = z.object({
  /** Replace the built-in identity paragraph. */
  identity: z.string().optional(),
  /** Read the workspace's AGENTS.md into the prompt. */
  projectInstructions: z.boolean().default(true),
}).default({ projectInstructions: true })

export function apply(ctx: Context, config: z.output<typeof Config>): void {
  const prompt = new PromptService(ctx)
  prompt.section({ id: 'identity', order: 0, render: () => config.identity ?? IDENTITY })
  prompt.section({ id: 'guidance', order: 100, render: () => GUIDANCE })
  prompt.section({ id: 'environment', order: 200, render: environmentSection })
  if (config.projectInstructions) prompt.section({ id: 'project', order: 300, render: projectSection(cachedReader()) })
}
