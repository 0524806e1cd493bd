import { existsSync, watch, type FSWatcher } from 'node:fs'
import { basename, dirname } from 'node:path'
import { Service, type Context } from '@deepseek-ai/cordis'
import { formatError, isDshError, type DshError, type ParseCache } from '@dsh/protocol'
import { CREDENTIALS_VERSION, envVarFor, readCredentials, removeCredential, setCredential, type Credentials, type ProviderCredential } from './credentials.js'
import { readSettings, SETTINGS_VERSION, type Settings } from './settings.js'

declare module '@deepseek-ai/cordis' {
  interface Context {
    settings: SettingsService
    credentials: CredentialsService
  }
  interface Events {
    'settings/changed'(settings: Settings): void
    'credentials/changed'(): void
  }
}

/**
 * Re-runs `onChange` (debounced) whenever `file` is created, changed, replaced or
 * removed. Watches the parent directory, so atomic renames are seen. Registered as
 * an effect of `ctx`: unloading the plugin closes the watcher.
 */
export function watchFile(ctx: Context, file: string, onChange: () => void, label: string): void {
  const dir = dirname(file)
  if (!existsSync(dir)) return
  ctx.effect(() => {
    let timer: NodeJS.Timeout | undefined
    let watcher: FSWatcher | undefined
    try {
      watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (name !== null && name !== basename(file)) return
        clearTimeout(timer)
        timer = setTimeout(onChange, 50)
      })
      watcher.on('error', () => watcher?.close())
    } catch {
      // an unwatchable directory means no hot reload; reading still works
    }
    return () => { clearTimeout(timer); watcher?.close() }
  }, `watch ${label}: ${file}`)
}

/**
 * `ctx.settings`: the parsed `$DSH_HOME/settings.yaml`, reloaded when the file
 * changes. Fails closed: a damaged file at start throws SETTINGS_INVALID (the row
 * fails, so nothing runs on defaults); damaged by a later edit, the last good
 * settings stay and the error is logged (file + key); `error` holds it until fixed.
 */
export class SettingsService extends Service {
  error: DshError | undefined
  private current: Settings = { version: SETTINGS_VERSION }

  /** `cache`: the parse cache for the file's YAML (see homeYamlCache). */
  constructor(ctx: Context, readonly file: string, private readonly cache?: ParseCache) {
    super(ctx, 'settings')
    const { value, notes } = readSettings(file, cache)
    for (const note of notes) ctx.logger('settings').warn(note)
    this.current = value
    watchFile(ctx, file, () => { if (this.reload()) ctx.emit('settings/changed', this.current) }, 'settings')
  }

  /** The current settings (never throws). */
  get(): Settings {
    return this.current
  }

  /** Re-reads the file; returns true when the settings changed. */
  reload(): boolean {
    try {
      const { value, notes } = readSettings(this.file, this.cache)
      for (const note of notes) this.ctx.logger('settings').warn(note)
      this.error = undefined
      const changed = JSON.stringify(value) !== JSON.stringify(this.current)
      this.current = value
      return changed
    } catch (error) {
      this.error = report(this.ctx, 'settings', error)
      return false
    }
  }
}

/**
 * `ctx.credentials`: API keys from `$DSH_HOME/.credentials.yaml` first, then the
 * environment. Re-read when the file changes. Keys are never logged; a damaged
 * file is logged by file and key and leaves the environment as the only source.
 */
export class CredentialsService extends Service {
  error: DshError | undefined
  private current: Credentials = { version: CREDENTIALS_VERSION, providers: {} }

  // the environment is read once (process.env reads are slow, and it does not change under us)
  constructor(ctx: Context, readonly file: string, private readonly env: Record<string, string | undefined> = { ...process.env }) {
    super(ctx, 'credentials')
    this.reload()
    watchFile(ctx, file, () => { this.reload(); ctx.emit('credentials/changed') }, 'credentials')
  }

  /** The key for `provider`: the file's, else `envVar` (default `<PROVIDER>_API_KEY`). */
  getApiKey(provider: string, envVar?: string): string | undefined {
    return this.current.providers[provider]?.apiKey ?? nonEmpty(this.env[envVar ?? envVarFor(provider, 'API_KEY')])
  }

  /** The base URL for `provider`: the file's, else `envVar` (default `<PROVIDER>_BASE_URL`). */
  getBaseUrl(provider: string, envVar?: string): string | undefined {
    return this.current.providers[provider]?.baseUrl ?? nonEmpty(this.env[envVar ?? envVarFor(provider, 'BASE_URL')])
  }

  /** Provider ids stored in the file. */
  providers(): string[] {
    return Object.keys(this.current.providers)
  }

  /** Stores a provider's credential in the file (0600, atomic). */
  set(provider: string, credential: ProviderCredential): void {
    this.current = setCredential(this.file, provider, credential)
  }

  /** Removes a provider's credential from the file; returns whether it was there. */
  remove(provider: string): boolean {
    const removed = removeCredential(this.file, provider)
    this.reload()
    return removed
  }

  reload(): void {
    try {
      const { value, notes } = readCredentials(this.file)
      for (const note of notes) this.ctx.logger('credentials').warn(note)
      this.error = undefined
      this.current = value
    } catch (error) {
      this.error = report(this.ctx, 'credentials', error)
    }
  }
}

function report(ctx: Context, name: string, error: unknown): DshError | undefined {
  ctx.logger(name).warn(formatError(error))
  return isDshError(error) ? error : undefined
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === '' ? undefined : value
}
