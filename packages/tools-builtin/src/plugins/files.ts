import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { createEditTool } from '../files/edit.js'
import { lsTool } from '../files/ls.js'
import { createReadTool } from '../files/read.js'
import { FileStamps } from '../files/stamps.js'
import { createWriteTool } from '../files/write.js'

/** read, write, edit and ls. They share what each session last saw of each file (stale-edit refusal). */
export const name = '@dsh/tools-builtin/files'
export const inject = ['tools', 'fs']
export const Config = z.object({})
export type Config = z.output<typeof Config>

export function apply(ctx: Context, _config: Config): void {
  const stamps = new FileStamps()
  for (const tool of [createReadTool(stamps), createWriteTool(stamps), createEditTool(stamps), lsTool]) {
    ctx.effect(() => ctx.tools.register(tool))
  }
}
