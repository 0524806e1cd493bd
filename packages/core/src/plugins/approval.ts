import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { ApprovalService } from '../safety/approval.js'

export const name = 'approval'
export const inject = ['sessions']
export const Config = z.object({}).default({})

export function apply(ctx: Context): void {
  ctx.sessions.defineEventType('approval/request')
  ctx.sessions.defineEventType('approval/decision')
  new ApprovalService(ctx)
}
