import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { JsonlSessionStore } from '../store.js'

/** `ctx.sessionStore` on JSONL files under `dir` (default `$DSH_HOME/sessions`). */
export const name = 'jsonl'
export const inject: string[] = []
export const Config = z.object({ dir: z.string().min(1).optional() }).strict().default({})

export function apply(ctx: Context, config: z.output<typeof Config>): void {
  const store = new JsonlSessionStore(ctx, config)
  ctx.effect(() => () => store.closeAll(), 'sessionStore.closeAll')
}
