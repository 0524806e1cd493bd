import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { SessionManager } from '../session/manager.js'

/** `ctx.sessions` over `ctx.sessionStore`; closes (flushes, unlocks) every open session when disposed. */
export const name = 'sessions'
export const inject = ['sessionStore']
export const Config = z.object({}).strict().default({})

export function apply(ctx: Context, _config: z.output<typeof Config>): void {
  const manager = new SessionManager(ctx)
  ctx.effect(() => () => manager.closeAll(), 'sessions.closeAll')
}
