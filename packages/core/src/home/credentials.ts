import { existsSync } from 'node:fs'
import { z } from 'zod'
import { DshError } from '@dsh/protocol'
import { keyPath, parseHomeYaml, readHomeFile, writeFileAtomic, yaml } from './files.js'
import type { Loaded } from './settings.js'

/**
 * `$DSH_HOME/.credentials.yaml` (mode 0600): v1 is
 * `{version: 1, providers: {<id>: {apiKey, baseUrl?}}}`. v0 is the unversioned
 * flat layout `<provider>_api_key: …` / `<provider>_base_url: …`, migrated on
 * read. No error message ever contains a key's value.
 */
export const CREDENTIALS_VERSION = 1

export const ProviderCredential = z.strictObject({
  apiKey: z.string().min(1),
  baseUrl: z.url().optional(),
})
export type ProviderCredential = z.infer<typeof ProviderCredential>

export const Credentials = z.strictObject({
  version: z.literal(CREDENTIALS_VERSION),
  providers: z.record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'provider ids use letters, digits, ".", "_" or "-"'), ProviderCredential).default({}),
})
export type Credentials = z.infer<typeof Credentials>

export const CREDENTIALS_MODE = 0o600

export function parseCredentials(text: string, file: string): Loaded<Credentials> {
  const raw = parseHomeYaml(text, file, 'CREDENTIALS_INVALID') ?? {}
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(file, '(top level)', 'expected a mapping')
  const notes: string[] = []
  let data = raw as Record<string, unknown>
  if (data.version === undefined) {
    data = migrateV0(data, file)
    notes.push(`${file}: read credentials format v0 (flat <provider>_api_key keys) as v${CREDENTIALS_VERSION}; the file is rewritten in v${CREDENTIALS_VERSION} the next time dsh saves it (dsh login)`)
  } else if (typeof data.version === 'number' && data.version > CREDENTIALS_VERSION) {
    throw invalid(file, 'version', `${data.version} is newer than this dsh reads (${CREDENTIALS_VERSION}); upgrade dsh`)
  }
  const parsed = Credentials.safeParse(data)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    // zod messages name types and keys, never the offending value.
    throw invalid(file, keyPath(issue.path), issue.message)
  }
  return { value: parsed.data, notes }
}

function migrateV0(data: Record<string, unknown>, file: string): Record<string, unknown> {
  const providers: Record<string, Record<string, unknown>> = {}
  for (const [key, value] of Object.entries(data)) {
    const m = /^(.+?)_(api_key|base_url)$/.exec(key)
    if (!m) throw invalid(file, key, 'unknown key in a v0 credentials file (expected <provider>_api_key or <provider>_base_url)')
    const entry = (providers[m[1]!] ??= {})
    entry[m[2] === 'api_key' ? 'apiKey' : 'baseUrl'] = value
  }
  return { version: CREDENTIALS_VERSION, providers }
}

/** Reads `file`; a missing file has no providers. */
export function readCredentials(file: string): Loaded<Credentials> {
  if (!existsSync(file)) return { value: { version: CREDENTIALS_VERSION, providers: {} }, notes: [] }
  return parseCredentials(readHomeFile(file, 'CREDENTIALS_INVALID'), file)
}

/** Writes credentials as v1, atomically, mode 0600. */
export function writeCredentials(file: string, credentials: Credentials): void {
  const body = yaml().stringify({ version: CREDENTIALS_VERSION, providers: credentials.providers })
  writeFileAtomic(file, `# dsh credentials (format v${CREDENTIALS_VERSION}); keep this file private (mode 0600)\n${body}`, CREDENTIALS_MODE)
}

/** Stores (replaces) one provider's credential; returns the new contents. */
export function setCredential(file: string, provider: string, credential: ProviderCredential): Credentials {
  const checked = ProviderCredential.safeParse(credential)
  if (!checked.success) throw invalid(file, `providers.${provider}.${keyPath(checked.error.issues[0]!.path)}`, checked.error.issues[0]!.message)
  const current = readCredentials(file).value
  const next: Credentials = { version: CREDENTIALS_VERSION, providers: { ...current.providers, [provider]: checked.data } }
  const validated = Credentials.safeParse(next)
  if (!validated.success) throw invalid(file, keyPath(validated.error.issues[0]!.path), validated.error.issues[0]!.message)
  writeCredentials(file, validated.data)
  return validated.data
}

/** Removes one provider's credential; returns whether it was there. */
export function removeCredential(file: string, provider: string): boolean {
  const current = readCredentials(file).value
  if (!(provider in current.providers)) return false
  const providers = { ...current.providers }
  delete providers[provider]
  writeCredentials(file, { version: CREDENTIALS_VERSION, providers })
  return true
}

/** `DEEPSEEK_API_KEY` for `deepseek`: the default environment variable of a provider. */
export function envVarFor(provider: string, suffix: 'API_KEY' | 'BASE_URL'): string {
  return `${provider.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_${suffix}`
}

function invalid(file: string, key: string, message: string): DshError {
  return new DshError('CREDENTIALS_INVALID', `${file}: key ${key}: ${message}`, { data: { file, key }, hint: `fix ${key} in ${file}, or store the key again with \`dsh login\`` })
}
