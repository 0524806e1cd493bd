import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { ToolRegistry } from '../tools/registry.js'

export const name = 'tools'
export const inject: string[] = []
export const Config = z.object({}).default({})

export function apply(ctx: Context): void {
  new ToolRegistry(ctx)
}
