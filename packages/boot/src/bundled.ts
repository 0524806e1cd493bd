import { register } from 'node:module'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The bundled build (decision 0060). `npm run build` also writes packages/cli/dist/bundle:
 * one ESM file per entry (`dsh`, `dsh-acp`), one per in-tree module a row or a plugin can
 * name (`@dsh/<pkg>` and `@dsh/<pkg>/<plugin>`), shared chunks, and a resolve hook. The
 * bundle's entry calls {@link useBundle} before anything else runs; outside the bundle
 * (source checkout, vitest, the per-file dist) nothing is registered and every function
 * here is a no-op, so rows import their resolved files as before.
 */
export interface BundleIndex {
  /** File URL of the bundle directory (ends with `/`). */
  dir: string
  /** Transpiled file (path relative to `dir`, as the resolver finds it) → bundle file name. */
  modules: Readonly<Record<string, string>>
  /** Bare specifier an out-of-tree module may import (`@dsh/core`, cordis) → bundle file name. */
  shared: Readonly<Record<string, string>>
  /** Bundle file name of the resolve hook that maps `shared` for out-of-tree modules. */
  hooks: string
  /** Loads a bundle file by URL (the code-cached CommonJS form of the bundle); default `import()`. */
  load?: ((url: string) => Promise<unknown>) | undefined
  /** Imports a module that is not the bundle's (an out-of-tree plugin); default `import()`. */
  importModule?: ((url: string) => Promise<unknown>) | undefined
}

let active: BundleIndex | undefined
/** `active.dir` as a path. */
let activeDir = ''
let hooked = false

/** Records the running bundle (called once, by the bundle's entry). */
export function useBundle(index: BundleIndex): void {
  active = index
  activeDir = fileURLToPath(index.dir)
}

/** True when dsh runs from its bundle. */
export function bundleActive(): boolean {
  return active !== undefined
}

/**
 * The file URL of the bundled copy of the resolved module file `path`, or undefined when
 * dsh does not run from its bundle or `path` is not one of dsh's own modules.
 */
export function bundledUrl(path: string): string | undefined {
  if (!active) return undefined
  const name = active.modules[relative(activeDir, path)]
  if (name === undefined) return undefined
  // a bundle file name of [\w.-] has nothing to escape: skip the URL parser (30 rows a launch)
  return /^\.\/[\w.-]+$/.test(name) ? `${active.dir}${name.slice(2)}` : new URL(name, active.dir).href
}

/** Imports the bundle file `url` (from {@link bundledUrl}) the way the running bundle loads its files. */
export function importBundled(url: string): Promise<unknown> {
  return active?.load ? active.load(url) : import(url)
}

/** Imports a module from outside the bundle (a profile's plugin, a relative or `file:` row). */
export function importExternal(url: string): Promise<unknown> {
  return active?.importModule ? active.importModule(url) : import(url)
}

/**
 * Before the first out-of-tree module is imported from a bundled run: installs the resolve
 * hook that maps its imports of dsh's shared packages onto the bundle, so plugin and tree
 * share one copy of each module (class identity, service keys). Idempotent; a no-op outside
 * the bundle.
 */
export function shareBundle(): void {
  if (!active || hooked) return
  hooked = true
  const shared = Object.fromEntries(Object.entries(active.shared).map(([specifier, name]) => [specifier, new URL(name, active!.dir).href]))
  register(new URL(active.hooks, active.dir).href, { data: { shared } })
}
