import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { PermissionService } from '../safety/permission.js'

export const name = 'permission'
export const inject = ['sessions']
export const Config = z.object({
  /** The preset a new session starts with (surfaces may override per session). */
  default: z.enum(['read-only', 'workspace-write', 'danger-full-access']).default('workspace-write'),
}).default({ default: 'workspace-write' })

export function apply(ctx: Context, config: z.output<typeof Config>): void {
  ctx.sessions.defineEventType('permission/preset')
  ctx.sessions.defineEventType('workspace/roots')
  new PermissionService(ctx, config.default)
}
