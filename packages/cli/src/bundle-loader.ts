import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Script } from 'node:vm'
import type { CodeCache } from './code-cache.js'

/**
 * Runs the CommonJS form of the bundle (decision 0085): each bundle file is compiled with
 * `vm.Script` and the V8 code cache of the build, instead of being compiled from source
 * as an ES module at every launch (Node 20 has no compile cache for ES modules). A file is
 * evaluated once, on first `require`, as a strict-mode function of
 * `(exports, require, module, __dshUrl, __dshHost)`: `require('./<file>.js')` loads
 * another bundle file, any other name is Node's own `require` from the bundle directory;
 * `__dshUrl` is the file's URL (the build writes it for `import.meta.url`) and `__dshHost`
 * the {@link BundleHost} the bundle's `useBundle` merges into its index. Files compiled
 * without an accepted cache get one written by {@link BundleLoader.flush}, after they ran,
 * so the functions the run compiled lazily are in it too.
 */
export interface BundleHost {
  /** Evaluates the bundle file at this URL (a row module the mounter maps to the bundle). */
  load(url: string): Promise<unknown>
  /** Imports an ES module from outside the bundle (an out-of-tree plugin). */
  importModule(url: string): Promise<unknown>
  /** Bare specifier an out-of-tree module may import → URL of the ES module facade of its bundle file. */
  shared: Record<string, string>
  /** URL of the resolve hook that maps `shared` (an ES module of the ES bundle). */
  hooks: string
}

export interface LoaderOptions {
  /** Directory of the CommonJS bundle files. */
  dir: string
  cache?: CodeCache | undefined
  /** What the bundle files get as `__dshHost`, besides `load`. */
  host: Omit<BundleHost, 'load'>
}

const LOCAL = /^\.\/[\w.-]+\.js$/

export class BundleLoader {
  private readonly modules = new Map<string, { exports: unknown }>()
  /** Scripts compiled without an accepted cache, in load order. */
  private readonly fresh: Array<{ name: string; script: Script }> = []
  private readonly nodeRequire: NodeJS.Require
  private readonly host: BundleHost

  /** File URL of `dir`, ending in `/` (a file's URL is this + its [\w.-] name: LOCAL). */
  private readonly dirUrl: string

  constructor(private readonly options: LoaderOptions) {
    this.nodeRequire = createRequire(join(options.dir, 'index.js'))
    this.dirUrl = pathToFileURL(join(options.dir, '/')).href
    this.host = { ...options.host, load: (url) => this.load(url) }
  }

  /** The exports of bundle file `./<name>`, evaluating it on first use; any other specifier is Node's `require`. */
  require(specifier: string): unknown {
    if (!LOCAL.test(specifier)) return this.nodeRequire(specifier)
    const name = specifier.slice(2)
    const known = this.modules.get(name)
    if (known) return known.exports
    const file = join(this.options.dir, name)
    const source = readFileSync(file, 'utf8')
    const cachedData = this.options.cache?.read(name)
    const script = new Script(`(function (exports, require, module, __dshUrl, __dshHost) {"use strict";${source}\n})`, { filename: file, ...(cachedData ? { cachedData } : {}) })
    if (!cachedData || script.cachedDataRejected) this.fresh.push({ name, script })
    const module = { exports: {} as unknown }
    this.modules.set(name, module)
    const fn = script.runInThisContext() as (...args: unknown[]) => void
    try {
      fn.call(undefined, module.exports, (s: string) => this.require(s), module, this.dirUrl + name, this.host)
    } catch (error) {
      this.modules.delete(name)
      throw error
    }
    return module.exports
  }

  /** {@link BundleHost.load}: the bundle file at `url` (which must be in the bundle directory). */
  load(url: string): Promise<unknown> {
    try {
      const path = fileURLToPath(url)
      if (dirname(path) !== this.options.dir) throw new Error(`${path} is not a file of the bundle in ${this.options.dir}`)
      return Promise.resolve(this.require(`./${basename(path)}`))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  /** Names of the files loaded so far without an accepted cache. */
  get compiled(): string[] {
    return this.fresh.map((f) => f.name)
  }

  /** Writes a cache entry for every file loaded without an accepted one (once each). */
  flush(): void {
    const cache = this.options.cache
    for (const { name, script } of this.fresh.splice(0)) {
      if (!cache) continue
      let data: Buffer
      try {
        data = script.createCachedData()
      } catch {
        continue
      }
      cache.write(name, data)
    }
  }
}
