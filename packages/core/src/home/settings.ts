import { existsSync, readFileSync } from 'node:fs'
import { stringify } from 'yaml'
import { z } from 'zod'
import { DshError } from '@dsh/protocol'
import { keyPath, parseHomeYaml, writeFileAtomic } from './files.js'

/**
 * `$DSH_HOME/settings.yaml`: product defaults. v1 is
 * `{version: 1, provider?, model?, permissionMode?, reasoningEffort?, ...}`
 * (other keys are kept for plugins that read them). v0 is the unversioned flat
 * layout with snake_case keys; it is migrated on read, and a renamed key found
 * in a v1 file is honoured with a note, so renaming never silently drops a setting.
 */
export const SETTINGS_VERSION = 1

export const Settings = z.looseObject({
  version: z.literal(SETTINGS_VERSION),
  provider: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  permissionMode: z.string().min(1).optional(),
  reasoningEffort: z.string().min(1).optional(),
})
export type Settings = z.infer<typeof Settings>

/** Old key → current key. */
export const SETTINGS_RENAMES: Readonly<Record<string, string>> = {
  default_provider: 'provider',
  default_model: 'model',
  permission_mode: 'permissionMode',
  reasoning_effort: 'reasoningEffort',
}

export interface Loaded<T> {
  value: T
  /** One line per migration or renamed key, naming the file. */
  notes: string[]
}

/** Parses settings text (any known version) into current settings. Errors: SETTINGS_INVALID. */
export function parseSettings(text: string, file: string): Loaded<Settings> {
  const raw = parseHomeYaml(text, file, 'SETTINGS_INVALID') ?? {}
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(file, '(top level)', 'expected a mapping of settings')
  const notes: string[] = []
  let data = { ...(raw as Record<string, unknown>) }
  const version = data.version
  if (version === undefined) {
    data = { version: SETTINGS_VERSION, ...data }
    notes.push(`${file}: read settings format v0 (no version) as v${SETTINGS_VERSION}; the file is rewritten in v${SETTINGS_VERSION} the next time dsh saves it`)
  } else if (typeof version !== 'number' || !Number.isInteger(version)) {
    throw invalid(file, 'version', 'expected an integer')
  } else if (version > SETTINGS_VERSION) {
    throw invalid(file, 'version', `${version} is newer than this dsh reads (${SETTINGS_VERSION}); upgrade dsh`)
  }
  for (const [old, now] of Object.entries(SETTINGS_RENAMES)) {
    if (!(old in data)) continue
    if (!(now in data)) {
      data[now] = data[old]
      notes.push(`${file}: key ${old} is now ${now}; using its value`)
    } else {
      notes.push(`${file}: key ${old} is obsolete and ignored (${now} is set)`)
    }
    delete data[old]
  }
  const parsed = Settings.safeParse(data)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw invalid(file, keyPath(issue.path), issue.message)
  }
  return { value: parsed.data, notes }
}

/** Reads `file`; a missing file is the empty v1 settings. */
export function readSettings(file: string): Loaded<Settings> {
  if (!existsSync(file)) return { value: { version: SETTINGS_VERSION }, notes: [] }
  return parseSettings(readFileSync(file, 'utf8'), file)
}

/** Writes settings (as v1) atomically. */
export function writeSettings(file: string, settings: Omit<Settings, 'version'>): void {
  writeFileAtomic(file, `# dsh settings (format v${SETTINGS_VERSION})\n${stringify({ ...settings, version: SETTINGS_VERSION })}`)
}

function invalid(file: string, key: string, message: string): DshError {
  return new DshError('SETTINGS_INVALID', `${file}: key ${key}: ${message}`, { data: { file, key }, hint: `fix or remove ${key} in ${file}` })
}
