import path from 'node:path'
import type { FsSeam } from '@dsh/exec'
import ignore, { type Ignore } from 'ignore'
import { byName } from '../text.js'

/** Ignore files read in each directory, lowest precedence first (as ripgrep does). */
export const IGNORE_FILES = ['.gitignore', '.ignore', '.rgignore'] as const

export const WALK_MAX_ENTRIES = 200_000

interface Matcher { base: string; ig: Ignore }

export interface WalkEntry {
  abs: string
  /** Relative to the walk root, with `/` separators. */
  rel: string
}

async function loadMatcher(fs: FsSeam, dir: string, names: ReadonlySet<string>): Promise<Matcher | undefined> {
  const present = IGNORE_FILES.filter((f) => names.has(f))
  if (present.length === 0) return undefined
  const ig = ignore()
  for (const file of present) {
    try {
      ig.add(new TextDecoder().decode(await fs.readFile(path.join(dir, file), { maxBytes: 1024 * 1024 })))
    } catch {
      // An unreadable ignore file ignores nothing.
    }
  }
  return { base: dir, ig }
}

/**
 * Ignore files of the directories above `root`, up to the enclosing repository root
 * (the first directory holding `.git`) or the filesystem root; outermost first.
 */
async function parentMatchers(fs: FsSeam, root: string): Promise<Matcher[]> {
  const found: Matcher[] = []
  let names = new Set((await fs.readdir(root).catch(() => [])).map((e) => e.name))
  if (names.has('.git')) return found
  for (let dir = path.dirname(root); ; dir = path.dirname(dir)) {
    names = new Set((await fs.readdir(dir).catch(() => [])).map((e) => e.name))
    const matcher = await loadMatcher(fs, dir, names)
    if (matcher) found.unshift(matcher)
    if (names.has('.git') || path.dirname(dir) === dir) return found
  }
}

/** The deepest matcher with a verdict decides (a child's `!pattern` re-includes). */
function ignored(matchers: readonly Matcher[], abs: string, isDir: boolean): boolean {
  for (let i = matchers.length - 1; i >= 0; i--) {
    const m = matchers[i]!
    const rel = path.relative(m.base, abs).split(path.sep).join('/')
    if (!rel || rel.startsWith('..')) continue
    const verdict = m.ig.test(isDir ? `${rel}/` : rel)
    if (verdict.ignored) return true
    if (verdict.unignored) return false
  }
  return false
}

/**
 * Visits the regular files under `root` depth-first in name order, skipping `.git`,
 * symlinks and whatever the ignore files (in `root`, below it and above it up to the
 * repository root) exclude. `visit` returns false to stop. `complete` is false when
 * the walk stopped early (visit, signal, or WALK_MAX_ENTRIES).
 */
export async function walkFiles(
  fs: FsSeam,
  root: string,
  visit: (entry: WalkEntry) => boolean | void | Promise<boolean | void>,
  options: { signal?: AbortSignal; maxEntries?: number } = {},
): Promise<{ complete: boolean }> {
  const max = options.maxEntries ?? WALK_MAX_ENTRIES
  let seen = 0
  const walk = async (dir: string, rel: string, matchers: Matcher[]): Promise<boolean> => {
    const entries = (await fs.readdir(dir).catch(() => [])).sort(byName)
    const own = await loadMatcher(fs, dir, new Set(entries.map((e) => e.name)))
    const scope = own ? [...matchers, own] : matchers
    for (const entry of entries) {
      if (options.signal?.aborted || ++seen > max) return false
      if (entry.name === '.git' || entry.type === 'symlink' || entry.type === 'other') continue
      const abs = path.join(dir, entry.name)
      const childRel = rel ? `${rel}/${entry.name}` : entry.name
      const isDir = entry.type === 'directory'
      if (ignored(scope, abs, isDir)) continue
      if (isDir) {
        if (!(await walk(abs, childRel, scope))) return false
      } else if ((await visit({ abs, rel: childRel })) === false) {
        return false
      }
    }
    return true
  }
  return { complete: await walk(root, '', await parentMatchers(fs, root)) }
}
