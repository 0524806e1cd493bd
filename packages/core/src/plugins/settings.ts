import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { resolveHome, settingsFile } from '../home/paths.js'
import { SettingsService } from '../home/services.js'
import { homeYamlCache } from '../home/files.js'

export { SettingsService }
export const name = 'settings'
export const inject: string[] = []
export const Config = z.object({
  /** Settings file; default `$DSH_HOME/settings.yaml`. */
  file: z.string().optional(),
})

export function apply(ctx: Context, config: z.infer<typeof Config>): void {
  const home = resolveHome()
  const file = config.file ?? settingsFile(home)
  // the parse cache belongs to a home: only the home's own settings file uses it (a file
  // named by config, e.g. a test's, never writes into whatever $DSH_HOME happens to be)
  new SettingsService(ctx, file, file === settingsFile(home) ? homeYamlCache(home) : undefined)
}
