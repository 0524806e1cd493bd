import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * A per-install cache of pure parses of small config files (the YAML patch and settings
 * files), so a launch whose files did not change never loads or runs the parser.
 *
 * Contract:
 * - `stamp` names the parser's code: the caller builds it from the dsh version and
 *   {@link codeStamp} of the module that holds the parse function, so a rebuilt,
 *   reinstalled or upgraded parser never trusts an entry made by another one.
 * - An entry is found by `kind` + the file's path and used only when its key — a hash of
 *   stamp, kind, path and the file's whole text — matches and its checksum holds. Anything
 *   else (missing, truncated, corrupt, stale, unreadable) is a miss: `parse` runs and the
 *   entry is rewritten (temporary file + rename, mode 0600 in a 0700 directory).
 * - `parse` must be pure over `text`. Its errors are never cached (a bad file fails the
 *   same way each launch). A result that does not survive JSON unchanged (undefined,
 *   non-finite numbers, non-plain objects) is returned but not stored.
 * - Writing is best effort: a read-only or full disk only costs the parse next time.
 */
export interface ParseCache {
  dir: string
  stamp: string
}

const FORMAT = 1

/**
 * The parse cache directory of a dsh home. Its entries hold parsed patch files, whose row
 * configs may carry tokens: it is one of the home's secret places (no tool reads it, the
 * sandbox masks its files).
 */
export function homeParseCacheDir(home: string): string {
  return join(home, 'cache', 'parsed')
}

/**
 * The home's parse cache keyed to the build of the parser module at `moduleUrl` (and `tag`,
 * e.g. dsh's version); undefined when that build cannot be identified (no cache then).
 */
export function homeParseCache(home: string, moduleUrl: string, tag?: string): ParseCache | undefined {
  const code = codeStamp(moduleUrl)
  return code === undefined ? undefined : { dir: homeParseCacheDir(home), stamp: tag === undefined ? code : `${tag}\0${code}` }
}

/** The identity of a module file's current build (`dev:ino:size:mtime`), or undefined when it is not a file. */
export function codeStamp(moduleUrl: string): string | undefined {
  if (!moduleUrl.startsWith('file:')) return undefined
  try {
    const s = statSync(fileURLToPath(moduleUrl), { bigint: true })
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`
  } catch {
    return undefined
  }
}

/** `parse(text)`, from the cache when `file`'s text was parsed by the same code before. */
export function cachedParse<T>(cache: ParseCache | undefined, kind: string, file: string, text: string, parse: (text: string) => T): T {
  if (!cache) return parse(text)
  const entry = join(cache.dir, `${sha256(`${kind}\0${file}`).slice(0, 40)}.json`)
  const key = sha256(`${FORMAT}\0${cache.stamp}\0${kind}\0${file}\0${text}`)
  const hit = readEntry(entry, key)
  if (hit.found) return hit.value as T
  const value = parse(text)
  if (jsonSafe(value)) writeEntry(cache.dir, entry, key, JSON.stringify(value))
  return value
}

function readEntry(entry: string, key: string): { found: true; value: unknown } | { found: false } {
  try {
    const stored = JSON.parse(readFileSync(entry, 'utf8')) as { v?: unknown; key?: unknown; sum?: unknown; value?: unknown }
    if (stored.v !== FORMAT || stored.key !== key || typeof stored.value !== 'string' || stored.sum !== sha256(stored.value)) return { found: false }
    return { found: true, value: JSON.parse(stored.value) }
  } catch {
    return { found: false }
  }
}

function writeEntry(dir: string, entry: string, key: string, value: string): void {
  const tmp = `${entry}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    writeFileSync(tmp, JSON.stringify({ v: FORMAT, key, sum: sha256(value), value }), { mode: 0o600 })
    renameSync(tmp, entry)
  } catch {
    try { rmSync(tmp, { force: true }) } catch { /* nothing was written */ }
  }
}

/** True when `JSON.parse(JSON.stringify(value))` is deeply equal to `value`. */
export function jsonSafe(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0)
    case 'object': {
      if (value === null) return true
      if (Array.isArray(value)) return value.every(jsonSafe)
      const proto = Object.getPrototypeOf(value) as unknown
      if (proto !== Object.prototype && proto !== null) return false
      return Object.entries(value).every(([k, v]) => k !== '__proto__' && jsonSafe(v))
    }
    default:
      return false
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}
