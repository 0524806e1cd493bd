// How the built `dsh` and `dsh-acp` run (decision 0085): the build bundles this file alone as
// CommonJS (packages/cli/dist/bundle-cjs/loader.cjs, so the bin scripts `require` it and no ES
// module facade of a Node built-in is made); the bin scripts call `start` with their entry,
// which runs the CommonJS form of the bundle through the V8 code cache in $DSH_HOME/cache/code.
// With DSH_DEBUG=1 the bin scripts import the ES module bundle instead (its source maps name the
// TypeScript sources in stack traces). DSH_CODE_CACHE=off compiles from source without reading
// or writing the cache.
import { existsSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import { BundleLoader } from '../bundle-loader.js'
import { cacheKey, openCodeCache } from '../code-cache.js'

/** `bundle-cjs/build.json`, written by scripts/bundle.mjs. */
interface Build {
  /** SHA-256 of every file of the CommonJS bundle. */
  id: string
  /** Bare specifier → ES module facade (relative to bundle-cjs) of the bundle file it names. */
  shared: Record<string, string>
}

/** Where the ES module facades find the running loader's `require` (`bundleRequire('./core.js')`). */
const GLOBAL = Symbol.for('dsh.bundleRequire')

/**
 * Keeps V8's young generation at its initial 1 MB semi-spaces instead of letting a long
 * session's survivors grow them to 16 MB (~30 MB of RSS at step 1,000; decision 0088). V8
 * reads the growth factor at each growth, so setting it here, before the bundle loads, is in
 * time; a semi-space flag the user gave (NODE_OPTIONS, node's own flags) wins.
 */
export function boundYoungGeneration(): void {
  if (!`${process.env.NODE_OPTIONS ?? ''} ${process.execArgv.join(' ')}`.includes('semi-space')) setFlagsFromString('--semi-space-growth-factor=1')
}

/**
 * Runs bundle entry `entry` (`dsh.js`, `dsh-acp.js`) of the CommonJS bundle of the cli package
 * whose bin script is `bin` (its file URL); throws `code: 'NOT_BUILT'` when that bundle is missing.
 */
export function start(entry: string, bin: string): void {
  boundYoungGeneration()
  const dist = fileURLToPath(new URL('../dist/', bin))
  const dir = join(dist, 'bundle-cjs')
  let build: Build
  try {
    build = JSON.parse(readFileSync(join(dir, 'build.json'), 'utf8')) as Build
  } catch (error) {
    throw Object.assign(new Error(`${join(dir, 'build.json')}: ${(error as Error).message}`), { code: 'NOT_BUILT' })
  }
  const env = process.env
  // $DSH_HOME: the rule of resolveHome (../env.ts), repeated so this file imports nothing of dsh's
  const home = env.DSH_HOME ? resolve(env.DSH_HOME) : join(homedir(), '.dsh')
  const cache = env.DSH_CODE_CACHE === 'off' ? undefined : openCodeCache(join(home, 'cache', 'code'), cacheKey(build.id, [...process.execArgv, env.NODE_OPTIONS ?? '']))
  const shared = Object.fromEntries(Object.entries(build.shared).map(([specifier, file]) => [specifier, pathToFileURL(join(dir, file)).href]))
  const hooks = pathToFileURL(join(dist, 'bundle', 'share-hooks.js')).href
  const loader = new BundleLoader({ dir, cache, host: { importModule: (url) => import(url), shared, hooks } })
  Object.defineProperty(globalThis, GLOBAL, { value: (name: string) => loader.require(name) })
  // a launch that never made a home (`--help`, `--version` on a new machine) leaves none behind
  process.on('exit', () => { if (existsSync(home)) loader.flush() })
  loader.require(`./${entry}`)
}
