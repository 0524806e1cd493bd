import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { cachedParse, DshError, homeParseCache, type ParseCache } from '@dsh/protocol'
import { composeParsed } from './compose/compose.js'
import { parsePatch, PATCH_PARSER_URL } from './compose/patch.js'
import type { Composition, PatchEntry, PatchSource } from './compose/types.js'
import { PATCH_FILE, type Profile } from './profile.js'
import { findPackageDir, readManifest } from './resolve.js'

/**
 * Reads the layers of a profile, in order: its bundles (listed order) → the
 * profile's `cordis.patch.yml` → `$DSH_HOME/cordis.patch.yml` → each overlay
 * (`--patch`, argv order). With `scope: 'bundles'` only the bundle layers.
 * Bundles resolve from the profile's node_modules first, then from dsh's own
 * installation (`dshRoot`). With `cache` (see {@link patchCache}) a file whose text was
 * parsed before by the same build is not parsed again.
 */
export interface LayerOptions {
  profile: Profile
  home: string
  dshRoot: string
  overlays?: readonly string[]
  scope?: 'all' | 'bundles'
  cache?: ParseCache | undefined
}

export function readLayers(options: LayerOptions): PatchSource[] {
  const { profile, home } = options
  const sources: PatchSource[] = profile.bundles.map((bundle, i) => readBundle(bundle, i, options))
  if (options.scope === 'bundles') return sources
  if (existsSync(profile.patchFile)) sources.push({ file: profile.patchFile, text: readText(profile.patchFile), label: `profile ${profile.name}` })
  const homePatch = homePatchFile(home)
  if (existsSync(homePatch)) sources.push({ file: homePatch, text: readText(homePatch), label: 'home' })
  for (const overlay of options.overlays ?? []) {
    const file = resolve(overlay)
    if (!existsSync(file)) throw new DshError('PATCH_NOT_FOUND', `patch file ${file} does not exist`, { data: { file }, hint: 'check the --patch path (relative paths are relative to the current directory)' })
    sources.push({ file, text: readText(file), label: '--patch' })
  }
  return sources
}

/** Reads and composes the layers (see {@link readLayers}). */
export function composeProfile(options: LayerOptions): Composition {
  return composeParsed(readLayers(options).map((source) => ({ source, entries: parsePatchCached(source, options.cache) })))
}

/**
 * The parse cache of patch files for dsh `version` under `$DSH_HOME/cache/parsed`, keyed
 * to this build of the patch parser; undefined when the parser's build cannot be identified.
 */
export function patchCache(home: string, version: string): ParseCache | undefined {
  return homeParseCache(home, PATCH_PARSER_URL, version)
}

/** {@link parsePatch} through the parse cache (errors are thrown as by parsePatch, never cached). */
export function parsePatchCached(source: PatchSource, cache: ParseCache | undefined): PatchEntry[] {
  if (!cache) return parsePatch(source)
  return cachedParse(cache, 'patch', source.file, source.text, (text) => parsePatch({ ...source, text }).map(toStored)).map(fromStored)
}

/**
 * A replacement that removes `config` (`config: ~`) holds `config: undefined`, which JSON
 * drops: stored, it is `clearConfig: true` instead.
 */
type StoredEntry = PatchEntry | (Extract<PatchEntry, { type: 'replace' }> & { clearConfig: true })

function toStored(entry: PatchEntry): StoredEntry {
  if (entry.type !== 'replace' || !('config' in entry.set) || entry.set.config !== undefined) return entry
  const { config: _removed, ...set } = entry.set
  return { ...entry, set, clearConfig: true }
}

function fromStored(entry: StoredEntry): PatchEntry {
  if (!('clearConfig' in entry)) return entry
  const { clearConfig: _flag, ...rest } = entry
  return { ...rest, set: { ...rest.set, config: undefined } }
}

export function homePatchFile(home: string): string {
  return join(home, PATCH_FILE)
}

/** Where row names and bundles are looked up: the profile, then dsh's own installation. */
export function searchDirs(profile: Profile, dshRoot: string): string[] {
  return [profile.dir, dshRoot]
}

/** The bundle's `cordis.patch.yml` path from its package.json `dsh.bundle.patch`. */
export function bundlePatchFile(pkgDir: string): string {
  const manifest = readManifest(pkgDir)
  const bundle = (manifest.dsh as Record<string, unknown> | undefined)?.bundle as Record<string, unknown> | undefined
  const patch = bundle?.patch
  if (typeof patch !== 'string' || patch === '') {
    throw new DshError('BUNDLE_INVALID', `${join(pkgDir, 'package.json')}: key dsh.bundle.patch must name the bundle's patch file`, { data: { file: join(pkgDir, 'package.json'), key: 'dsh.bundle.patch' } })
  }
  return resolve(pkgDir, patch)
}

function readBundle(bundle: string, index: number, options: LayerOptions): PatchSource {
  const { profile } = options
  const pkgDir = findPackageDir(bundle, searchDirs(profile, options.dshRoot))
  if (!pkgDir) {
    throw new DshError('BUNDLE_NOT_FOUND', `bundle ${bundle} (${profile.packageFile}, key dsh.profile.bundles[${index}]) is not installed`, {
      hint: bundle.startsWith('@dsh/') ? `${bundle} is not part of this build of dsh` : `install it: dsh plugin --profile ${profile.name} add ${bundle}`,
      data: { file: profile.packageFile, key: `dsh.profile.bundles[${index}]`, bundle },
    })
  }
  const file = bundlePatchFile(pkgDir)
  if (!existsSync(file)) throw new DshError('BUNDLE_INVALID', `bundle ${bundle}: patch file ${file} does not exist`, { data: { file } })
  return { file, text: readText(file), label: `bundle ${bundle}` }
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    throw new DshError('PATCH_UNREADABLE', `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error, data: { file } })
  }
}
