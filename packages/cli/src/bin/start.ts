// How the built `dsh` and `dsh-acp` run (decision 0085): the bin scripts call `start` with
// their entry, which runs the CommonJS form of the bundle (packages/cli/dist/bundle-cjs)
// through the V8 code cache in $DSH_HOME/cache/code. With DSH_DEBUG=1 the bin scripts import
// the ES module bundle instead (its source maps name the TypeScript sources in stack traces).
// DSH_CODE_CACHE=off compiles from source without reading or writing the cache.
import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { BundleLoader } from '../bundle-loader.js'
import { cacheKey, openCodeCache } from '../code-cache.js'

/** `bundle-cjs/build.json`, written by scripts/bundle.mjs. */
interface Build {
  /** SHA-256 of every file of the CommonJS bundle. */
  id: string
  /** Bare specifier → ES module facade (relative to bundle-cjs) of the bundle file it names. */
  shared: Record<string, string>
}

let loader: BundleLoader | undefined

/** Runs bundle entry `entry` (`dsh.js`, `dsh-acp.js`); throws `code: 'NOT_BUILT'` when the CommonJS bundle is missing. */
export function start(entry: string): void {
  const dir = join(fileURLToPath(new URL('..', import.meta.url)), 'bundle-cjs')
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
  const running = new BundleLoader({ dir, cache, host: { importModule: (url) => import(url), shared, hooks: new URL('./share-hooks.js', import.meta.url).href } })
  loader = running
  process.on('exit', () => running.flush())
  running.require(`./${entry}`)
}

/** The exports of bundle file `name` (`./core.js`) in the running bundle: what the ES module facades re-export. */
export function bundleRequire(name: string): unknown {
  if (!loader) throw new Error('dsh is not running from its CommonJS bundle')
  return loader.require(name)
}
