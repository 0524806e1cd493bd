import { promises as fsp, lstatSync } from 'node:fs'
import path from 'node:path'
import { DshError } from '@dsh/protocol'
import type { LinkedFile } from './hardlinks.js'

/**
 * At most this many mounts confine hard links to the outside. bubblewrap re-reads
 * /proc/self/mountinfo at each bind and it grows by a line per bind, so N binds cost
 * O(N²): ~6 ms a command at 32, ~16 ms at 64, ~0.4 s at 500, 1.6 s at 1,000 (idle, 0099).
 */
export const MAX_LINK_MOUNTS = 64

/** How the sandbox confines the outside links of the writable roots. */
export interface LinkPlan {
  /** Bound read-only: outside links, and directories every regular file under which is one (bar `writable`). */
  readOnly: string[]
  /**
   * Bound read-write again, after `readOnly`: regular files and directories inside a
   * read-only directory that hold no outside link (their content stays writable; the
   * directory's own entries do not: nothing can be created, removed or renamed there).
   */
  writable: string[]
  /** `dev:ino` of every planned path when it was planned; a difference means plan again. */
  inodes: ReadonlyMap<string, string>
}

export interface PlanOptions {
  /** Linked files whose links are all inside the roots (a file with nlink > 1 not in here or in `outside` is treated as an outside link). */
  inside?: ReadonlySet<string>
  limit?: number
}

/**
 * The mounts that make every outside link read-only (0021). Up to `limit` links: one bind
 * each, nothing else changes. More: the fewest mounts, found over the directory tree of
 * the links (each directory either stays writable and confines what it holds, or is bound
 * read-only whole with its link-free files and subdirectories bound writable again);
 * symlinks, empty or symlink-only directories, fifos and sockets inside a read-only
 * directory stay as they are but cannot be changed. A directory holding another writable
 * root is never made read-only. SANDBOX_HARDLINKS when even that needs more than `limit`.
 */
export async function planLinkMounts(outside: readonly LinkedFile[], roots: readonly string[], options: PlanOptions = {}): Promise<LinkPlan> {
  const limit = options.limit ?? MAX_LINK_MOUNTS
  const inside = options.inside ?? new Set<string>()
  const files = [...new Set(outside.map((f) => f.path))]
  if (files.length <= limit) return finish(files, [])

  const byLength = [...new Set(roots)].sort((a, b) => b.length - a.length)
  const rootOf = (p: string) => byLength.find((r) => r !== p && p.startsWith(r === '/' ? '/' : `${r}/`))
  const filesIn = new Map<string, string[]>()
  const dirsIn = new Map<string, Set<string>>()
  const add = <T>(map: Map<string, T>, key: string, make: () => T) => map.get(key) ?? map.set(key, make()).get(key)!
  for (const file of files) {
    const root = rootOf(file)
    if (!root) continue
    add(filesIn, path.dirname(file), () => []).push(file)
    for (let d = path.dirname(file); d !== root; d = path.dirname(d)) add(dirsIn, path.dirname(d), () => new Set()).add(d)
  }
  // the directories between a nested root and the root holding it: a read-only bind there would cover the nested root's binds
  const pinned = new Set<string>()
  for (const inner of byLength) {
    const outer = rootOf(inner)
    if (outer) for (let d = path.dirname(inner); d !== outer; d = path.dirname(d)) pinned.add(d)
  }

  // W: mounts when the directory stays writable; R: when it is under a read-only bind (not counting that bind)
  const linkedDirs = [...new Set([...dirsIn.values()].flatMap((s) => [...s]))].sort((a, b) => depth(b) - depth(a))
  const W = new Map<string, number>()
  const R = new Map<string, number>()
  const exceptions = new Map<string, string[]>()
  const known = new Set([...files, ...linkedDirs])
  for (const dir of linkedDirs) {
    const subdirs = [...(dirsIn.get(dir) ?? [])]
    W.set(dir, (filesIn.get(dir)?.length ?? 0) + sum(subdirs.map((c) => Math.min(W.get(c)!, 1 + R.get(c)!))))
    const own = pinned.has(dir) ? undefined : await writableEntries(dir, known, inside)
    exceptions.set(dir, own ?? [])
    R.set(dir, own ? own.length + sum(subdirs.map((c) => R.get(c)!)) : Infinity)
  }

  const readOnly: string[] = []
  const writable: string[] = []
  const frozen = (dir: string): void => {
    writable.push(...exceptions.get(dir)!)
    for (const c of dirsIn.get(dir) ?? []) frozen(c)
  }
  const open = (dir: string): void => {
    readOnly.push(...(filesIn.get(dir) ?? []))
    for (const c of dirsIn.get(dir) ?? []) {
      if (1 + R.get(c)! < W.get(c)!) {
        readOnly.push(c)
        frozen(c)
      } else open(c)
    }
  }
  for (const root of byLength) if (!rootOf(root)) open(root)
  for (const root of byLength) if (rootOf(root)) open(root)
  const mounts = readOnly.length + writable.length
  if (mounts > limit) {
    throw new DshError('SANDBOX_HARDLINKS',
      `${files.length} files in the writable roots are hard links to files outside them (e.g. ${files.slice(0, 3).join(', ')}); `
      + `a command writing through one would change the outside file, and confining them takes ${mounts} mounts even with whole directories bound read-only, more than ${limit} (each mount slows every command).`,
      { hint: 'break the links (e.g. clone with `git clone --no-hardlinks`, copy the files over themselves, or set pnpm\'s package-import-method to copy), or choose danger-full-access knowingly' })
  }
  return finish(readOnly, writable)
}

/** Whether every planned path is still the inode it was when planned. */
export function planHolds(plan: LinkPlan): boolean {
  for (const [p, inode] of plan.inodes) if (inodeOf(p) !== inode) return false
  return true
}

/**
 * The entries of `dir` (none of them in `known`, the outside links and linked subdirectories)
 * that must be bound writable again if `dir` is bound read-only: regular files (a file with
 * other links not known to be inside counts as an outside link) and directories holding any
 * regular file or mount. Undefined when `dir` cannot be listed.
 */
async function writableEntries(dir: string, known: ReadonlySet<string>, inside: ReadonlySet<string>): Promise<string[] | undefined> {
  const entries = await fsp.readdir(dir, { withFileTypes: true }).catch(() => undefined)
  const top = lstat(dir)
  if (!entries || !top) return undefined
  const out: string[] = []
  for (const entry of entries) {
    const p = path.join(dir, entry.name)
    if (known.has(p)) continue
    if (entry.isFile()) {
      const st = lstat(p)
      if (st && (st.nlink === 1 || inside.has(p))) out.push(p)
    } else if (entry.isDirectory() && await holdsFiles(p, top.dev)) out.push(p)
  }
  return out
}

/** Whether `dir` holds a regular file, a mount or an unreadable directory anywhere under it (symlinks not followed). */
async function holdsFiles(dir: string, dev: number): Promise<boolean> {
  const st = lstat(dir)
  if (!st || st.dev !== dev) return true
  const entries = await fsp.readdir(dir, { withFileTypes: true }).catch(() => undefined)
  if (!entries) return true
  for (const entry of entries) {
    if (entry.isFile()) return true
    if (entry.isDirectory() && await holdsFiles(path.join(dir, entry.name), dev)) return true
  }
  return false
}

function finish(readOnly: string[], writable: string[]): LinkPlan {
  const inodes = new Map<string, string>()
  for (const p of [...readOnly, ...writable]) {
    const inode = inodeOf(p)
    if (inode) inodes.set(p, inode)
  }
  // a path gone since it was found has nothing to mount (bwrap refuses a missing source)
  return { readOnly: readOnly.filter((p) => inodes.has(p)), writable: writable.filter((p) => inodes.has(p)), inodes }
}

function lstat(p: string) {
  try {
    return lstatSync(p)
  } catch {
    return undefined
  }
}

function inodeOf(p: string): string | undefined {
  const st = lstat(p)
  return st ? `${st.dev}:${st.ino}` : undefined
}

const depth = (p: string) => p.split('/').length
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
