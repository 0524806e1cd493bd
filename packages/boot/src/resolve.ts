import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DshError } from '@dsh/protocol'

/**
 * A small ESM resolver (Node 20's `import.meta.resolve` takes no parent): finds a
 * package by walking up `node_modules` from each search directory in order, then
 * maps the subpath through `package.json` `exports` (conditions, `*` patterns) or,
 * without `exports`, through `main` / the file path. Relative specifiers resolve
 * against `base` (the file that introduced them). Returns a real (symlink-free)
 * absolute path, so one module file is imported once however it was reached.
 */
export interface ResolveOptions {
  /** Directories to search from, in order (each walks up to the file system root). */
  searchDirs: readonly string[]
  /** The file a relative specifier is relative to. */
  base?: string
  /** Export conditions, in addition to `default`. Defaults to node + import. */
  conditions?: readonly string[]
  /**
   * Package directories and manifests already found, shared by the resolutions of one
   * composition (the mounter makes one per `apply`, so a reload sees the disk again): thirty
   * rows name a handful of packages (0095).
   */
  memo?: ResolveMemo
}

/** See {@link ResolveOptions.memo}. */
export interface ResolveMemo {
  dirs: Map<string, string | undefined>
  manifests: Map<string, Record<string, unknown>>
}

export function resolveMemo(): ResolveMemo {
  return { dirs: new Map(), manifests: new Map() }
}

export const DEFAULT_CONDITIONS: readonly string[] = ['node', 'import']

export function resolveModule(specifier: string, options: ResolveOptions): string {
  if (specifier.startsWith('file:')) return existing(fileURLToPath(specifier), specifier)
  if (specifier.startsWith('./') || specifier.startsWith('../') || isAbsolute(specifier)) {
    const from = options.base ? dirname(options.base) : process.cwd()
    return existing(resolve(from, specifier), specifier, options.base)
  }
  const { pkg, subpath } = splitSpecifier(specifier)
  const memo = options.memo
  const dirKey = `${pkg}\0${options.searchDirs.join('\0')}`
  const pkgDir = memo?.dirs.has(dirKey) ? memo.dirs.get(dirKey) : findPackageDir(pkg, options.searchDirs)
  memo?.dirs.set(dirKey, pkgDir)
  if (!pkgDir) {
    throw new DshError('MODULE_NOT_FOUND', `cannot find package ${pkg}`, {
      data: { specifier, searched: [...options.searchDirs] },
      hint: pkg.startsWith('@dsh/') ? `${pkg} is not part of this build of dsh` : `install it into the profile: dsh plugin --profile <name> add ${pkg}`,
    })
  }
  const manifest = memo?.manifests.get(pkgDir) ?? readManifest(pkgDir)
  memo?.manifests.set(pkgDir, manifest)
  const conditions = new Set([...(options.conditions ?? DEFAULT_CONDITIONS), 'default'])
  if (manifest.exports !== undefined && manifest.exports !== null) {
    const target = matchExports(manifest.exports, subpath, conditions)
    if (target === undefined) throw new DshError('MODULE_NOT_FOUND', `package ${pkg} (${pkgDir}) does not export ${JSON.stringify(subpath)}`, { data: { specifier } })
    return existing(resolve(pkgDir, target), specifier)
  }
  if (subpath === '.') return existing(resolve(pkgDir, typeof manifest.main === 'string' ? manifest.main : 'index.js'), specifier)
  const file = join(pkgDir, subpath)
  for (const candidate of [file, `${file}.js`, `${file}.mjs`, join(file, 'index.js')]) {
    if (isFile(candidate)) return realpathSync.native(candidate)
  }
  throw new DshError('MODULE_NOT_FOUND', `cannot find ${specifier} in ${pkgDir}`, { data: { specifier } })
}

/** The directory of package `pkg` seen from the first search directory that reaches it. */
export function findPackageDir(pkg: string, searchDirs: readonly string[]): string | undefined {
  for (const start of searchDirs) {
    let dir = resolve(start)
    for (;;) {
      const candidate = join(dir, 'node_modules', pkg)
      if (existsSync(join(candidate, 'package.json'))) return candidate
      const parent = dirname(dir)
      if (parent === dir) break
      dir = parent
    }
  }
  return undefined
}

/** `@scope/name/sub/path` → `{pkg: '@scope/name', subpath: './sub/path'}`. */
export function splitSpecifier(specifier: string): { pkg: string; subpath: string } {
  const parts = specifier.split('/')
  const n = specifier.startsWith('@') ? 2 : 1
  if (parts.length < n || parts.slice(0, n).some((p) => p === '')) throw new DshError('MODULE_NOT_FOUND', `invalid module name ${JSON.stringify(specifier)}`)
  const rest = parts.slice(n).join('/')
  return { pkg: parts.slice(0, n).join('/'), subpath: rest ? `./${rest}` : '.' }
}

/**
 * Maps `subpath` through an `exports` field. Returns the target path relative to
 * the package, or undefined when the subpath is not exported (or maps to null).
 */
export function matchExports(exportsField: unknown, subpath: string, conditions: ReadonlySet<string>): string | undefined {
  const map = isSubpathMap(exportsField) ? (exportsField as Record<string, unknown>) : { '.': exportsField }
  if (Object.hasOwn(map, subpath) && !subpath.includes('*')) return pickTarget(map[subpath], conditions, undefined)
  let best: { key: string; match: string } | undefined
  for (const key of Object.keys(map)) {
    const star = key.indexOf('*')
    if (star < 0) continue
    const prefix = key.slice(0, star)
    const suffix = key.slice(star + 1)
    if (subpath.length >= key.length - 1 && subpath.startsWith(prefix) && subpath.endsWith(suffix)) {
      if (!best || prefix.length > best.key.indexOf('*')) best = { key, match: subpath.slice(prefix.length, subpath.length - suffix.length) }
    }
  }
  return best ? pickTarget(map[best.key], conditions, best.match) : undefined
}

function pickTarget(target: unknown, conditions: ReadonlySet<string>, star: string | undefined): string | undefined {
  if (typeof target === 'string') return star === undefined ? target : target.replaceAll('*', star)
  if (Array.isArray(target)) {
    for (const t of target) {
      const r = pickTarget(t, conditions, star)
      if (r !== undefined) return r
    }
    return undefined
  }
  if (typeof target === 'object' && target !== null) {
    for (const [key, value] of Object.entries(target)) {
      if (conditions.has(key)) {
        const r = pickTarget(value, conditions, star)
        if (r !== undefined) return r
      }
    }
  }
  return undefined
}

function isSubpathMap(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).some((k) => k.startsWith('.'))
}

/** Reads a package.json; a damaged one is a DshError naming the file. */
export function readManifest(pkgDir: string): Record<string, unknown> {
  return readJsonObject(join(pkgDir, 'package.json'), 'PACKAGE_INVALID')
}

/** Reads a file holding one JSON object; unreadable, invalid or not an object is DshError(code) naming the file. */
export function readJsonObject(file: string, code: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(readFileSync(file, 'utf8'))
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object')
    return value as Record<string, unknown>
  } catch (error) {
    throw new DshError(code, `${file}: ${(error as Error).message}`, { cause: error, data: { file } })
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

function existing(path: string, specifier: string, base?: string): string {
  if (!isFile(path)) {
    throw new DshError('MODULE_NOT_FOUND', `cannot find module ${specifier}${base ? ` (relative to ${base})` : ''}: ${path} does not exist`, { data: { specifier, path } })
  }
  return realpathSync.native(path)
}
