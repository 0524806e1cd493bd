import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { DshError } from '@dsh/protocol'
import { compose } from './compose/compose.js'
import type { Composition, PatchSource } from './compose/types.js'
import { PATCH_FILE, type Profile } from './profile.js'
import { findPackageDir, readManifest } from './resolve.js'

/**
 * Reads the layers of a profile, in order: its bundles (listed order) → the
 * profile's `cordis.patch.yml` → `$DSH_HOME/cordis.patch.yml` → each overlay
 * (`--patch`, argv order). With `scope: 'bundles'` only the bundle layers.
 * Bundles resolve from the profile's node_modules first, then from dsh's own
 * installation (`dshRoot`).
 */
export interface LayerOptions {
  profile: Profile
  home: string
  dshRoot: string
  overlays?: readonly string[]
  scope?: 'all' | 'bundles'
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
  return compose(readLayers(options))
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
