/** Registers the Anthropic Messages adapter with the `llm` service (protocol 'anthropic'). */
import type { Context } from '@deepseek-ai/cordis'
import type { LlmAdapter } from '@dsh/protocol'
import { z } from 'zod'
import { anthropicAdapter } from '../adapter.js'

/**
 * The slice of core's `llm` service this plugin uses. `ctx.llm` itself is declared on
 * `Context` by @dsh/core (`LlmService`); assigning it to this type checks that it fits.
 */
export interface LlmRegistry {
  /** Adds an adapter for its protocol; the returned function removes it. */
  registerAdapter(adapter: LlmAdapter): () => void
}

export const name = 'llm-anthropic'
export const inject = ['llm']
export const Config = z.object({}).default({})
export type Config = z.infer<typeof Config>

export function apply(ctx: Context, _config: Config): void {
  ctx.effect(() => {
    const llm: LlmRegistry = ctx.llm
    return llm.registerAdapter(anthropicAdapter)
  })
}
