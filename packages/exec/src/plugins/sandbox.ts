import type { Context } from '@deepseek-ai/cordis'
import { homeSecretDirs, resolveHome } from '@dsh/core'
import { z } from 'zod'
import { SecretFiles } from '../fs/secrets.js'
import { Bubblewrap } from '../sandbox/bubblewrap.js'
import { LocalSandbox } from '../sandbox/service.js'
import type { SandboxMechanism } from '../sandbox/types.js'

export const name = '@dsh/exec/sandbox'
export const inject = ['subprocess']
export const Config = z.object({
  /** `auto`: the platform's mechanisms in order (Linux: bubblewrap). `none`: no mechanism, so sandboxed modes fail closed. */
  mechanism: z.enum(['auto', 'bubblewrap', 'none']).default('auto'),
  bwrapPath: z.string().default('bwrap'),
  /** More files to make unreadable inside the sandbox (besides `$DSH_HOME`'s credentials store and patch files). */
  maskFiles: z.array(z.string().min(1)).optional(),
})
export type Config = z.output<typeof Config>

export function candidates(config: Config, platform: NodeJS.Platform = process.platform): SandboxMechanism[] {
  switch (config.mechanism) {
    case 'none': return []
    case 'bubblewrap': return [new Bubblewrap(config.bwrapPath)]
    case 'auto': return platform === 'linux' ? [new Bubblewrap(config.bwrapPath)] : []
  }
}

export function apply(ctx: Context, config: Config): void {
  const secrets = new SecretFiles(resolveHome(), config.maskFiles ?? [])
  new LocalSandbox(ctx, ctx.subprocess, candidates(config), () => secrets.list(), () => (secrets.home ? homeSecretDirs(secrets.home) : []))
}
