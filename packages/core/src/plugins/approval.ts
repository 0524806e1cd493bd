import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { ApprovalService } from '../safety/approval.js'

export const name = 'approval'
export const inject: string[] = []
export const Config = z.object({}).default({})

export function apply(ctx: Context): void {
  new ApprovalService(ctx)
}
