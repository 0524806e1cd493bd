import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { findPackageDir, openProfile, readManifest, writeProfileBundles, type Profile } from '@dsh/boot'
import { DshError } from '@dsh/protocol'
import { DEFAULT_PROFILE, type Args } from './args.js'
import type { LaunchEnv } from './env.js'

/** Bundles of a profile created by `dsh plugin add` when it does not exist yet. */
export const NEW_PROFILE_BUNDLES = ['@dsh/bundle-base']

/**
 * `dsh plugin --profile NAME add|remove|list [PKG...]`: npm installs into the
 * profile's folder, then the profile's bundle list is reconciled: an installed
 * package that declares `dsh.bundle` is appended once; a removed one is dropped.
 */
export async function pluginCommand(args: Extract<Args, { type: 'plugin' }>, launch: LaunchEnv): Promise<number> {
  const out = process.stdout
  const name = args.profile ?? DEFAULT_PROFILE
  const profile = openProfile(launch.home, name, args.action === 'add' ? NEW_PROFILE_BUNDLES : undefined)
  for (const note of profile.notes) launch.io.stderr.write(`${note}\n`)
  if (profile.created) launch.io.stderr.write(`created profile ${profile.name} in ${profile.dir} (bundles: ${profile.bundles.join(', ') || 'none'})\n`)
  switch (args.action) {
    case 'list': {
      out.write(`profile ${profile.name} (${profile.dir})\nbundles, in layer order:\n`)
      for (const bundle of profile.bundles) {
        const local = findPackageDir(bundle, [profile.dir])
        const where = local ? 'profile' : findPackageDir(bundle, [launch.dshRoot]) ? 'dsh' : 'NOT INSTALLED'
        out.write(`  ${bundle} (${where})\n`)
      }
      const deps = Object.keys(dependencies(profile))
      out.write(`installed packages: ${deps.length ? '' : '(none)'}\n`)
      for (const dep of deps) out.write(`  ${dep}${isBundle(profile, dep) ? ' (bundle)' : ''}\n`)
      return 0
    }
    case 'add': {
      const specs = args.packages.map((p) => localSpec(p, launch.cwd))
      const before = dependencies(profile)
      await npm(['install', '--prefix', profile.dir, '--save', '--no-audit', '--no-fund', ...specs], launch)
      const after = dependencies(profile)
      const named = specs.map((s) => packageNameOf(s)).filter((n): n is string => n !== undefined)
      const candidates = [...new Set([...Object.keys(after).filter((d) => !(d in before)), ...named])].filter((d) => d in after)
      const bundles = [...profile.bundles]
      for (const dep of candidates) {
        if (!isBundle(profile, dep)) { out.write(`installed ${dep} into profile ${profile.name} (not a bundle: insert its rows with a patch)\n`); continue }
        if (bundles.includes(dep)) { out.write(`${dep} is already a bundle of profile ${profile.name}\n`); continue }
        bundles.push(dep)
        out.write(`added bundle ${dep} to profile ${profile.name}\n`)
      }
      if (bundles.length !== profile.bundles.length) writeProfileBundles(profile.packageFile, bundles)
      return 0
    }
    case 'remove': {
      const installed = dependencies(profile)
      const unknown = args.packages.filter((p) => !(p in installed) && !profile.bundles.includes(p))
      if (unknown.length) {
        throw new DshError('PLUGIN_NOT_INSTALLED', `${unknown.join(', ')} ${unknown.length > 1 ? 'are' : 'is'} not installed in profile ${profile.name}`, {
          hint: `see what is: dsh plugin --profile ${profile.name} list`,
        })
      }
      await npm(['uninstall', '--prefix', profile.dir, '--save', '--no-audit', '--no-fund', ...args.packages], launch)
      const bundles = profile.bundles.filter((b) => !args.packages.includes(b))
      for (const b of profile.bundles) if (!bundles.includes(b)) out.write(`removed bundle ${b} from profile ${profile.name}\n`)
      if (bundles.length !== profile.bundles.length) writeProfileBundles(profile.packageFile, bundles)
      return 0
    }
  }
}

function dependencies(profile: Profile): Record<string, string> {
  const manifest = JSON.parse(readFileSync(profile.packageFile, 'utf8')) as { dependencies?: Record<string, string> }
  return manifest.dependencies ?? {}
}

function isBundle(profile: Profile, pkg: string): boolean {
  const dir = findPackageDir(pkg, [profile.dir])
  if (!dir) return false
  const dsh = readManifest(dir).dsh as { bundle?: unknown } | undefined
  return typeof dsh?.bundle === 'object' && dsh.bundle !== null
}

/** A local path becomes absolute (npm resolves relative specs against --prefix). */
function localSpec(spec: string, cwd: string): string {
  if (spec.startsWith('.') || spec.startsWith('/') || existsSync(resolve(cwd, spec))) return resolve(cwd, spec)
  return spec
}

/** The package name a spec installs, when it can be told without npm. */
function packageNameOf(spec: string): string | undefined {
  if (spec.startsWith('/')) {
    const file = join(spec, 'package.json')
    if (!existsSync(file)) return undefined
    const name = (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name
    return typeof name === 'string' ? name : undefined
  }
  const m = /^(@[^/@]+\/[^/@]+|[^/@][^/@]*)(@.*)?$/.exec(spec)
  return m?.[1]
}

function npm(argv: string[], launch: LaunchEnv): Promise<void> {
  const bin = launch.env.DSH_NPM ?? 'npm'
  return new Promise((resolveRun, reject) => {
    const child = spawn(bin, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } })
    child.stdout.pipe(launch.io.stderr, { end: false })
    child.stderr.pipe(launch.io.stderr, { end: false })
    child.on('error', (error) => reject(new DshError('NPM_FAILED', `cannot run ${bin}: ${error.message}`, { cause: error, hint: 'install npm, or set DSH_NPM to its path' })))
    child.on('close', (code, signal) => {
      if (code === 0) resolveRun()
      else reject(new DshError('NPM_FAILED', `${bin} ${argv[0]} exited with ${signal ?? code}`, { hint: 'see npm\'s output above' }))
    })
  })
}
