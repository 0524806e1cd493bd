import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { releaseSessionTmp } from '../home/tmp.js'
import { PermissionService } from '../safety/permission.js'

export const name = 'permission'
export const inject = ['sessions']
export const Config = z.object({
  /** The preset a new session starts with (surfaces may override per session). */
  default: z.enum(['read-only', 'workspace-write', 'danger-full-access']).default('workspace-write'),
  /** Let sandboxed commands use the network (off: they get their own empty network namespace; a command may ask, per call). */
  network: z.boolean().default(false),
}).default({ default: 'workspace-write', network: false })

export function apply(ctx: Context, config: z.output<typeof Config>): void {
  ctx.sessions.defineEventType('permission/preset')
  ctx.sessions.defineEventType('workspace/roots')
  new PermissionService(ctx, config.default, config.network)
  // a closed session's temp root (command TMPDIR, spilled output) goes with it
  ctx.on('session/closed', (session) => releaseSessionTmp(session.id))
}
