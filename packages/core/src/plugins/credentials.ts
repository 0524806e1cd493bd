import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { credentialsFile, resolveHome } from '../home/paths.js'
import { CredentialsService } from '../home/services.js'

export { CredentialsService }
// For the launcher's `dsh login` (also exported from @dsh/core via ./home/index.js).
export { credentialsFile, readCredentials, removeCredential, setCredential } from '../home/index.js'
export { BUILTIN_PROVIDERS } from '../llm/providers.js'
export const name = 'credentials'
export const inject: string[] = []
export const Config = z.object({
  /** Credentials file; default `$DSH_HOME/.credentials.yaml`. */
  file: z.string().optional(),
})

export function apply(ctx: Context, config: z.infer<typeof Config>): void {
  new CredentialsService(ctx, config.file ?? credentialsFile(resolveHome()))
}
