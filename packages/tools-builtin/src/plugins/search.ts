import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { globTool } from '../search/glob.js'
import { createGrepTool } from '../search/grep.js'

/** glob and grep. grep uses ripgrep when `rgPath --version` runs (probed once), else its JavaScript engine. */
export const name = '@dsh/tools-builtin/search'
export const inject = ['tools', 'fs', 'subprocess']
export const Config = z.object({
  ripgrep: z.enum(['auto', 'never']).default('auto'),
  rgPath: z.string().default('rg'),
})
export type Config = z.output<typeof Config>

export function apply(ctx: Context, config: Config): void {
  let probe: Promise<string | undefined> | undefined
  const engine = {
    ripgrep: () => probe ??= config.ripgrep === 'never'
      ? Promise.resolve(undefined)
      : ctx.subprocess.run([config.rgPath, '--version'], { cwd: '/', timeoutMs: 10_000 })
        .then((r) => (r.exitCode === 0 ? config.rgPath : undefined), () => undefined),
  }
  for (const tool of [globTool, createGrepTool(engine)]) ctx.effect(() => ctx.tools.register(tool))
}
