import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync, chmodSync } from 'node:fs'
import { dirname, basename, join } from 'node:path'
import { createRequire } from 'node:module'
import { cachedParse, DshError, homeParseCache, type ParseCache } from '@dsh/protocol'

type Yaml = typeof import('yaml')
let loaded: Yaml | undefined

/** The `yaml` library, required on first use (a launch with no home YAML to parse never loads it). */
export function yaml(): Yaml {
  return (loaded ??= createRequire(import.meta.url)('yaml') as Yaml)
}

/**
 * The parse cache for home YAML files that hold no secret (settings), under
 * `$DSH_HOME/cache/parsed`, keyed to this module's build; undefined when that cannot be
 * identified. Never used for `.credentials.yaml`: a cache must not keep a removed key.
 */
export function homeYamlCache(home: string): ParseCache | undefined {
  return homeParseCache(home, import.meta.url)
}

/**
 * Parses a home YAML file. A syntax error is `DshError(code)` with
 * `file:line:col` and the parser's reason only — never the source text, which may
 * hold a secret. An empty file is `undefined`. With `cache`, a text parsed before by this
 * build is taken from the cache (errors are never cached).
 */
export function parseHomeYaml(text: string, file: string, code: string, cache?: ParseCache): unknown {
  return cachedParse(cache, `home-yaml:${code}`, file, text, (t) => parseHomeYamlText(t, file, code))
}

function parseHomeYamlText(text: string, file: string, code: string): unknown {
  const { LineCounter, parseDocument } = yaml()
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true })
  const error = doc.errors[0]
  if (error) {
    const pos = error.linePos?.[0]
    const reason = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '').replace(/:$/, '')
    throw new DshError(code, `${pos ? `${file}:${pos.line}:${pos.col}` : file}: ${reason}`, { data: { file, ...(pos ? { line: pos.line } : {}) } })
  }
  return doc.toJS() ?? undefined
}

/**
 * Reads a home file as UTF-8. A file that exists but cannot be read (a directory, no
 * permission, an I/O error) is `DshError(code)` naming the file and the reason.
 */
export function readHomeFile(file: string, code: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'EISDIR' ? 'it is a directory, not a file' : (error as NodeJS.ErrnoException).code ?? (error as Error).message
    throw new DshError(code, `${file}: cannot read it (${reason})`, { cause: error, data: { file }, hint: `make ${file} a readable YAML file, or remove it` })
  }
}

/**
 * Writes `text` to `file` atomically: a temporary file in the same directory
 * created with `mode`, fsynced, renamed over `file`, then the directory fsynced.
 * The parent directory is created (mode 0700) when missing.
 */
export function writeFileAtomic(file: string, text: string, mode = 0o644): void {
  const dir = dirname(file)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const tmp = join(dir, `.${basename(file)}.${process.pid}.${Date.now()}.tmp`)
  const fd = openSync(tmp, 'wx', mode)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } catch (error) {
    closeSync(fd)
    unlinkSync(tmp)
    throw error
  }
  closeSync(fd)
  chmodSync(tmp, mode) // the umask may have narrowed or widened nothing; make it exact
  renameSync(tmp, file)
  try {
    const dfd = openSync(dir, 'r')
    try { fsyncSync(dfd) } finally { closeSync(dfd) }
  } catch {
    // some file systems refuse to fsync a directory; the rename is still atomic
  }
}

/** `a.b[0]` for a zod issue path (keys only, never values). */
export function keyPath(path: readonly PropertyKey[]): string {
  return path.map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i ? '.' : ''}${String(k)}`)).join('') || '(top level)'
}
