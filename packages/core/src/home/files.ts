import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync, chmodSync } from 'node:fs'
import { dirname, basename, join } from 'node:path'
import { LineCounter, parseDocument } from 'yaml'
import { DshError } from '@dsh/protocol'

/**
 * Parses a home YAML file. A syntax error is `DshError(code)` with
 * `file:line:col` and the parser's reason only — never the source text, which may
 * hold a secret. An empty file is `undefined`.
 */
export function parseHomeYaml(text: string, file: string, code: string): unknown {
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
