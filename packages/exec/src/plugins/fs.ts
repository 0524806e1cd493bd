import type { Context } from '@deepseek-ai/cordis'
import { resolveHome } from '@dsh/core'
import { z } from 'zod'
import { LocalFs } from '../fs/local.js'
import { SecretFiles } from '../fs/secrets.js'
import { routed } from '../world.js'

export const name = '@dsh/exec/fs'
export const inject: string[] = []
export const Config = z.object({
  /** More files no tool may read or write (besides `$DSH_HOME`'s credentials store and patch files). */
  secretFiles: z.array(z.string().min(1)).optional(),
})
export type Config = z.output<typeof Config>

export function apply(ctx: Context, config: Config): void {
  const local = new LocalFs(ctx, new SecretFiles(resolveHome(), config.secretFiles ?? []))
  // calls made inside a world (`inWorld`) go to that world's provider
  ctx.reflect.set('fs', routed('fs', local))
}
