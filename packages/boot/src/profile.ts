import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { DshError } from '@dsh/protocol'
import { readJsonObject } from './resolve.js'

/**
 * Profiles live in `$DSH_HOME/profiles/<name>/`: a `package.json` whose
 * `dsh.profile` is `{version: 1, bundles: [...]}`, the profile's own
 * `cordis.patch.yml`, and a `node_modules` for out-of-tree plugins.
 *
 * Format versions: v1 is the above; v0 (a `dsh.profile` without `version`, or a
 * bare `dsh.bundles` list) is migrated forward on read with a note.
 */
export const PROFILE_VERSION = 1
export const PATCH_FILE = 'cordis.patch.yml'

/** Template profiles, created on first use. */
export const TEMPLATES: Readonly<Record<string, readonly string[]>> = {
  headless: ['@dsh/bundle-base', '@dsh/bundle-headless'],
  acp: ['@dsh/bundle-base', '@dsh/bundle-acp'],
  web: ['@dsh/bundle-base', '@dsh/bundle-web'],
  sdk: ['@dsh/bundle-base', '@dsh/bundle-sdk'],
}

export interface Profile {
  name: string
  dir: string
  packageFile: string
  patchFile: string
  bundles: string[]
  /** True when this open created the profile (from a template or `create`). */
  created: boolean
  /** Lines to show the user: format migrations of the profile's files. */
  notes: string[]
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

export function profilesDir(home: string): string {
  return join(home, 'profiles')
}

export function profileDir(home: string, name: string): string {
  if (!NAME.test(name)) throw new DshError('PROFILE_NAME_INVALID', `invalid profile name ${JSON.stringify(name)}`, { hint: 'use letters, digits, ".", "_" or "-"' })
  return join(profilesDir(home), name)
}

/** Names of the profiles that exist under `home` (sorted). */
export function listProfiles(home: string): string[] {
  const dir = profilesDir(home)
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(dir, e.name, 'package.json')))
    .map((e) => e.name)
    .sort()
}

/**
 * Opens profile `name`. A missing profile is created when `name` is a template,
 * or when `create` gives its bundle list; otherwise UNKNOWN_PROFILE lists the
 * existing profiles and the templates.
 */
export function openProfile(home: string, name: string, create?: readonly string[]): Profile {
  const dir = profileDir(home, name)
  const packageFile = join(dir, 'package.json')
  const patchFile = join(dir, PATCH_FILE)
  if (!existsSync(packageFile)) {
    const bundles = TEMPLATES[name] ?? create
    if (!bundles) {
      const existing = listProfiles(home)
      throw new DshError('UNKNOWN_PROFILE', `no profile named ${JSON.stringify(name)} in ${profilesDir(home)}`, {
        hint: `existing profiles: ${existing.length ? existing.join(', ') : '(none)'}; templates: ${Object.keys(TEMPLATES).join(', ')}`,
        data: { profile: name, existing, templates: Object.keys(TEMPLATES) },
      })
    }
    createProfile(dir, name, bundles)
    return { name, dir, packageFile, patchFile, bundles: [...bundles], created: true, notes: [] }
  }
  const { bundles, notes } = readProfileManifest(packageFile)
  return { name, dir, packageFile, patchFile, bundles, created: false, notes }
}

/** Writes a new profile; on failure (a full disk) the half-made profile is removed and PROFILE_WRITE_FAILED thrown. */
function createProfile(dir: string, name: string, bundles: readonly string[]): void {
  const existed = existsSync(dir)
  try {
    mkdirSync(dir, { recursive: true })
    const manifest = { name: `dsh-profile-${name}`, private: true, dsh: { profile: { version: PROFILE_VERSION, bundles: [...bundles] } } }
    if (!existsSync(join(dir, PATCH_FILE))) writeAtomic(join(dir, PATCH_FILE), patchTemplate(name))
    writeAtomic(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  } catch (cause) {
    // best effort: the clean-up fails the same way when a part of the path is a file
    if (!existed) try { rmSync(dir, { recursive: true, force: true }) } catch { /* nothing was made */ }
    const errno = (cause as NodeJS.ErrnoException).code
    const file = errno === 'ENOTDIR' ? fileOnPath(dir) : undefined
    const why = errno === 'ENOSPC' ? 'the disk is full (ENOSPC)' : file ? `${file} is a file, not a directory (ENOTDIR)` : (cause as Error).message
    throw new DshError('PROFILE_WRITE_FAILED', `creating profile ${name} in ${dir} failed: ${why}`, {
      cause,
      hint: errno === 'ENOSPC' ? 'free some disk space, then run again'
        : file ? `make ${file} a directory (or point $DSH_HOME elsewhere), then run again` : `check the permissions of ${dir}`,
    })
  }
}

/** The nearest existing ancestor of `dir` when it is not a directory (what ENOTDIR was about). */
function fileOnPath(dir: string): string | undefined {
  for (let at = dirname(dir); at !== dirname(at); at = dirname(at)) {
    let stat
    try { stat = statSync(at) } catch { continue }
    return stat.isDirectory() ? undefined : at
  }
  return undefined
}

/** The commented example written into a new profile's `cordis.patch.yml`. */
export function patchTemplate(name: string): string {
  return [
    `# Patch for profile "${name}", applied after its bundles and before $DSH_HOME/cordis.patch.yml.`,
    '# Editing this file while dsh runs reloads the changed rows.',
    '# `dsh --profile ' + name + ' --dump-config` prints the effective rows and where each came from.',
    '#',
    '# Replace keys of a row wholesale (no deep merge: restate the whole config):',
    '# - id: llm',
    '#   config:',
    '#     provider: deepseek',
    '#     model: deepseek-chat',
    '#',
    '# Turn a row off:',
    '# - id: tool-search',
    '#   disabled: true',
    '#',
    '# Add rows (a package installed with `dsh plugin add`, or a file next to this one):',
    '# - insert:',
    '#     - id: my-plugin',
    '#       name: ./my-plugin.js',
    '#       config: {}',
    '',
  ].join('\n')
}

/** Reads `dsh.profile` from a profile's package.json, migrating v0 forward. */
export function readProfileManifest(packageFile: string): { manifest: Record<string, unknown>; bundles: string[]; notes: string[] } {
  const manifest = readJsonObject(packageFile, 'PROFILE_INVALID')
  const notes: string[] = []
  const dsh = manifest.dsh as Record<string, unknown> | undefined
  let profile = dsh?.profile as Record<string, unknown> | undefined
  if (profile === undefined && Array.isArray(dsh?.bundles)) {
    profile = { bundles: dsh.bundles }
    notes.push(`${packageFile}: migrated profile from v0 (dsh.bundles) to v${PROFILE_VERSION} (dsh.profile.bundles); rewritten the next time dsh saves it`)
  } else if (typeof profile === 'object' && profile !== null && profile.version === undefined) {
    notes.push(`${packageFile}: migrated profile from v0 (no dsh.profile.version) to v${PROFILE_VERSION}; rewritten the next time dsh saves it`)
  }
  if (typeof profile !== 'object' || profile === null || Array.isArray(profile)) {
    throw new DshError('PROFILE_INVALID', `${packageFile}: key dsh.profile is missing or not an object`, { data: { file: packageFile, key: 'dsh.profile' } })
  }
  const version = profile.version ?? 0
  if (typeof version !== 'number' || version > PROFILE_VERSION) {
    throw new DshError('PROFILE_INVALID', `${packageFile}: key dsh.profile.version is ${JSON.stringify(version)}; this dsh reads up to ${PROFILE_VERSION}`, {
      hint: 'the profile was written by a newer dsh; upgrade dsh', data: { file: packageFile, key: 'dsh.profile.version' },
    })
  }
  const bundles = profile.bundles ?? []
  if (!Array.isArray(bundles)) throw new DshError('PROFILE_INVALID', `${packageFile}: key dsh.profile.bundles must be a list of package names`, { data: { file: packageFile, key: 'dsh.profile.bundles' } })
  bundles.forEach((b, i) => {
    if (typeof b !== 'string' || b === '') throw new DshError('PROFILE_INVALID', `${packageFile}: key dsh.profile.bundles[${i}] must be a package name`, { data: { file: packageFile, key: `dsh.profile.bundles[${i}]` } })
  })
  return { manifest, bundles: bundles as string[], notes }
}

/** Rewrites the profile's bundle list (as v1), keeping every other package.json field. */
export function writeProfileBundles(packageFile: string, bundles: readonly string[]): void {
  const { manifest } = readProfileManifest(packageFile)
  const dsh = { ...(manifest.dsh as Record<string, unknown> | undefined) }
  delete dsh.bundles
  dsh.profile = { ...(dsh.profile as Record<string, unknown> | undefined), version: PROFILE_VERSION, bundles: [...bundles] }
  writeAtomic(packageFile, `${JSON.stringify({ ...manifest, dsh }, null, 2)}\n`)
}

function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`
  try {
    writeFileSync(tmp, text)
    renameSync(tmp, file)
  } catch (error) {
    rmSync(tmp, { force: true })
    throw error
  }
}
