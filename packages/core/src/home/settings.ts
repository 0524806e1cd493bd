import { existsSync, statSync } from 'node:fs'
import { z } from 'zod'
import { DshError, didYouMean, PERMISSION_PRESETS, REASONING_EFFORTS, type ParseCache } from '@dsh/protocol'
import { keyPath, parseHomeYaml, readHomeFile, writeFileAtomic, yaml } from './files.js'

/**
 * `$DSH_HOME/settings.yaml`: product defaults. v1 is
 * `{version: 1, provider?, model?, permissionMode?, reasoningEffort?}`; nothing else.
 * Fails closed: an unknown key or a bad value is SETTINGS_INVALID naming the file,
 * the key and the accepted values (never the whole file dropped for a default).
 * v0 (no `version:`) is the same keys, or the old snake_case ones: a file with old keys
 * is migrated in place once (comments kept) with a note; a file with none is read as v1
 * silently.
 */
export const SETTINGS_VERSION = 1

const PRESET_IDS = PERMISSION_PRESETS.map((p) => p.id) as [string, ...string[]]

export const Settings = z.strictObject({
  version: z.literal(SETTINGS_VERSION),
  provider: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  permissionMode: z.enum(PRESET_IDS).optional(),
  reasoningEffort: z.enum(REASONING_EFFORTS).optional(),
  /** The execution world of new sessions (@dsh/world-ssh); the local machine when absent. */
  world: z.strictObject({
    url: z.string().min(1),
    identity: z.string().min(1).optional(),
    knownHosts: z.string().min(1).optional(),
  }).optional(),
})
export type Settings = z.infer<typeof Settings>

/** What each key accepts, for error messages. */
const ACCEPTS: Readonly<Record<string, string>> = {
  version: `${SETTINGS_VERSION}`,
  provider: 'a provider id (e.g. deepseek)',
  model: 'a model id (e.g. deepseek-chat)',
  permissionMode: PRESET_IDS.join(', '),
  reasoningEffort: REASONING_EFFORTS.join(', '),
  world: '{url: ssh://USER@HOST[:PORT]/ROOT, identity?: FILE, knownHosts?: FILE}',
}

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

/** Settings plus, when old keys were migrated, the file's text in the current layout. */
export interface ParsedSettings extends Loaded<Settings> {
  migrated?: string
}

/** Parses settings text (any known version) into current settings (the YAML through `cache` when given). Errors: SETTINGS_INVALID. */
export function parseSettings(text: string, file: string, cache?: ParseCache): ParsedSettings {
  const raw = parseHomeYaml(text, file, 'SETTINGS_INVALID', cache) ?? {}
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(file, '(top level)', 'expected a mapping of settings')
  const notes: string[] = []
  let data = { ...(raw as Record<string, unknown>) }
  const version = data.version
  if (version === undefined) {
    data = { version: SETTINGS_VERSION, ...data }
  } else if (typeof version !== 'number' || !Number.isInteger(version)) {
    throw invalid(file, 'version', `expected an integer (accepted: ${SETTINGS_VERSION})`)
  } else if (version > SETTINGS_VERSION) {
    throw invalid(file, 'version', `${version} is newer than this dsh reads (${SETTINGS_VERSION}); upgrade dsh`)
  }
  const renames: [string, string][] = []
  for (const [old, now] of Object.entries(SETTINGS_RENAMES)) {
    if (!(old in data)) continue
    if (now in data) {
      throw invalid(file, old, `obsolete key (now ${now}), and ${now} is set too; remove ${old}`)
    }
    data[now] = data[old]
    delete data[old]
    renames.push([old, now])
  }
  const known = Object.keys(ACCEPTS)
  for (const key of Object.keys(data)) {
    if (!known.includes(key)) throw invalid(file, key, `unknown key${didYouMean(key, known)}; known keys: ${known.join(', ')}`)
  }
  const parsed = Settings.safeParse(data)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const key = keyPath(issue.path)
    // the value is not quoted: a mistyped secret must not land in a log
    throw invalid(file, key, `${issue.message.replace(/^Invalid option: expected one of .*$/, 'invalid value')} (accepted: ${ACCEPTS[key] ?? 'see the docs'})`)
  }
  if (!renames.length) return { value: parsed.data, notes }
  for (const [old, now] of renames) notes.push(`${file}: key ${old} is now ${now}; the file was migrated to format v${SETTINGS_VERSION}`)
  return { value: parsed.data, notes, migrated: migrateText(text, renames) }
}

/** `text` with old keys renamed in place (comments and order kept) and `version:` set. */
function migrateText(text: string, renames: readonly [string, string][]): string {
  const { isMap, isScalar, parseDocument } = yaml()
  const doc = parseDocument(text)
  const map = doc.contents
  if (isMap(map)) {
    for (const pair of map.items) {
      const key = pair.key
      const rename = isScalar(key) ? renames.find(([old]) => old === key.value) : undefined
      if (rename && isScalar(key)) key.value = rename[1]
    }
  }
  if (!doc.has('version')) (map as { items: unknown[] } | null)?.items.unshift(doc.createPair('version', SETTINGS_VERSION))
  return doc.toString()
}

/**
 * Reads `file`; a missing file is the empty v1 settings. A file with old keys is
 * rewritten in the current layout (atomically) so the note shows once.
 */
export function readSettings(file: string, cache?: ParseCache): Loaded<Settings> {
  if (!existsSync(file)) return { value: { version: SETTINGS_VERSION }, notes: [] }
  const { value, notes, migrated } = parseSettings(readHomeFile(file, 'SETTINGS_INVALID'), file, cache)
  if (migrated !== undefined) {
    try {
      writeFileAtomic(file, migrated, statSync(file).mode & 0o777)
    } catch (error) {
      notes.push(`${file}: could not rewrite it in format v${SETTINGS_VERSION} (${(error as Error).message}); it is read as before`)
    }
  }
  return { value, notes }
}

/** Writes settings (as v1) atomically. */
export function writeSettings(file: string, settings: Omit<Settings, 'version'>): void {
  writeFileAtomic(file, `# dsh settings (format v${SETTINGS_VERSION})\n${yaml().stringify({ ...settings, version: SETTINGS_VERSION })}`)
}

function invalid(file: string, key: string, message: string): DshError {
  return new DshError('SETTINGS_INVALID', `${file}: key ${key}: ${message}`, { data: { file, key }, hint: `fix or remove ${key} in ${file}` })
}
