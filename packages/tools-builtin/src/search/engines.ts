import path from 'node:path'
import { StringDecoder } from 'node:string_decoder'
import { ToolError } from '@dsh/core'
import type { FsSeam, SubprocessSeam } from '@dsh/exec'
import picomatch from 'picomatch'
import { displayPath } from '../text.js'
import { walkFiles } from './walk.js'

export const GREP_MAX_COLUMNS = 500
export const GREP_MAX_FILE_BYTES = 20 * 1024 * 1024

export interface GrepQuery {
  pattern: string
  /** Absolute directory or file to search. */
  target: string
  /** Paths are shown relative to this directory when inside it. */
  cwd: string
  ignoreCase: boolean
  glob?: string | undefined
  max: number
  signal?: AbortSignal
}

export interface GrepMatch { path: string; line: number; text: string }
export interface GrepOutcome { matches: GrepMatch[]; more: boolean; complete: boolean }

/** A glob without `/` matches the file name at any depth; with `/`, the path relative to the search root. */
function globMatcher(glob: string | undefined): ((rel: string) => boolean) | undefined {
  return glob ? picomatch(glob, { dot: true, ...(glob.includes('/') ? {} : { basename: true }) }) : undefined
}

/** `abs` relative to `target` with `/` separators; the file name when `target` is the file itself. */
function relativeTo(target: string, abs: string): string {
  return abs === target ? path.basename(abs) : path.relative(target, abs).split(path.sep).join('/')
}

function cutLine(text: string): string {
  const line = text.endsWith('\r') ? text.slice(0, -1) : text
  return line.length > GREP_MAX_COLUMNS ? `${line.slice(0, GREP_MAX_COLUMNS)} […]` : line
}

/** ripgrep, through the subprocess seam. Same rules as the JS engine: hidden files searched, .git skipped, ignore files honoured everywhere. */
export async function ripgrep(subprocess: SubprocessSeam, rgPath: string, q: GrepQuery): Promise<GrepOutcome> {
  const inside = displayPath(q.cwd, q.target)
  const argv = [
    rgPath, '--no-config', '--line-number', '--with-filename', '--no-heading', '--color', 'never', '--null',
    '--hidden', '--no-require-git', '--no-ignore-global', '--no-ignore-exclude', '--glob', '!.git', '--sort', 'path',
    '--max-columns', String(GREP_MAX_COLUMNS), '--max-columns-preview', q.ignoreCase ? '--ignore-case' : '--case-sensitive',
    '--regexp', q.pattern, '--', inside.startsWith('/') ? inside : inside === '.' ? '.' : `./${inside}`,
  ]
  // The glob is applied here, not with rg --glob: a ripgrep glob overrides ignore files.
  const glob = globMatcher(q.glob)
  const matches: GrepMatch[] = []
  const errors: string[] = []
  let more = false
  let pending = ''
  const decoder = new StringDecoder('utf8')
  const stop = new AbortController()
  const onAbort = () => stop.abort()
  q.signal?.addEventListener('abort', onAbort, { once: true })
  const take = (line: string) => {
    const nul = line.indexOf('\0')
    const m = nul === -1 ? null : /^(\d+):/.exec(line.slice(nul + 1))
    if (!m) {
      if (line.trim()) errors.push(line)
      return
    }
    const file = line.slice(0, nul).replace(/^\.\//, '')
    if (glob && !glob(relativeTo(q.target, path.resolve(q.cwd, file)))) return
    if (matches.length >= q.max) {
      more = true
      stop.abort()
      return
    }
    matches.push({ path: file, line: Number(m[1]), text: cutLine(line.slice(nul + 1 + m[0].length)) })
  }
  const result = await subprocess.run(argv, {
    cwd: q.cwd,
    signal: stop.signal,
    onData: (chunk) => {
      if (more) return
      pending += decoder.write(chunk)
      const lines = pending.split('\n')
      pending = lines.pop()!
      for (const line of lines) if (!more) take(line)
    },
  }).finally(() => q.signal?.removeEventListener('abort', onAbort))
  if (pending && !more) take(pending)
  if (result.exitCode === 2 && matches.length === 0) {
    const message = errors.join('\n').trim()
    if (/regex parse error|error parsing/.test(message)) throw new ToolError(`Invalid regex /${q.pattern}/: ${message.replace(/\s+/g, ' ')}`)
    throw new ToolError(`grep failed: ${message || 'ripgrep exited with an error'}`)
  }
  return { matches, more, complete: !q.signal?.aborted }
}

/** The fallback engine: JavaScript regular expressions over the walked files (binary files, with a NUL byte, are skipped). */
export async function jsGrep(fs: FsSeam, q: GrepQuery): Promise<GrepOutcome> {
  let re: RegExp
  try {
    re = new RegExp(q.pattern, q.ignoreCase ? 'i' : '')
  } catch (error) {
    throw new ToolError(`Invalid regex /${q.pattern}/: ${(error as Error).message}`)
  }
  const glob = globMatcher(q.glob)
  const matches: GrepMatch[] = []
  let more = false
  const searchFile = async (abs: string, rel: string): Promise<boolean> => {
    if (glob && !glob(rel)) return true
    let bytes: Uint8Array
    try {
      bytes = await fs.readFile(abs, { maxBytes: GREP_MAX_FILE_BYTES })
    } catch {
      return true
    }
    if (bytes.includes(0)) return true
    const lines = new TextDecoder().decode(bytes).split('\n')
    if (lines.at(-1) === '') lines.pop()
    const shown = displayPath(q.cwd, abs)
    for (let i = 0; i < lines.length; i++) {
      if (!re.test(lines[i]!)) continue
      if (matches.length >= q.max) {
        more = true
        return false
      }
      matches.push({ path: shown, line: i + 1, text: cutLine(lines[i]!) })
    }
    return true
  }
  const st = await fs.stat(q.target)
  if (st?.type === 'file') {
    await searchFile(q.target, relativeTo(q.target, q.target))
    return { matches, more, complete: true }
  }
  const walked = await walkFiles(fs, q.target, ({ abs, rel }) => searchFile(abs, rel), q.signal ? { signal: q.signal } : {})
  return { matches, more, complete: walked.complete || more }
}
