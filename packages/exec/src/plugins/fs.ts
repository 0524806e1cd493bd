import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { LocalFs } from '../fs/local.js'
import { routed } from '../world.js'

export const name = '@dsh/exec/fs'
export const inject: string[] = []
export const Config = z.object({})
export type Config = z.output<typeof Config>

export function apply(ctx: Context, _config: Config): void {
  const local = new LocalFs(ctx)
  // calls made inside a world (`inWorld`) go to that world's provider
  ctx.reflect.set('fs', routed('fs', local))
}
