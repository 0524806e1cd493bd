import { chmodSync, closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { DshError } from '@dsh/protocol'

/**
 * Per-user temp roots. `/tmp` is shared by every user, so dsh never uses a fixed shared
 * name: the base is `<tmpdir>/dsh-<uid>`, created 0700, and before every use it (and each
 * session's folder under it) must be a real directory (not a symlink) owned by this user
 * and closed to others; a wrong mode on our own directory is fixed, anything else is
 * TMP_ROOT_UNSAFE (never followed, never used).
 */
export function userTmpBase(): string {
  const id = typeof process.getuid === 'function' ? String(process.getuid()) : userInfo().username
  return join(tmpdir(), `dsh-${id}`)
}

/** `<base>/<name>`: the path only (no I/O), for removal. */
export function sessionTmpPath(name: string): string {
  return join(userTmpBase(), name)
}

/**
 * Creates (0700) and checks the user's temp base and `name` under it; returns the folder.
 * The first time in a process, `name` gets an owner file beside it (`<name>.owner`: this
 * process's pid and start time; in the base, which sandboxed commands cannot write) and the
 * folders of owners that are gone are swept (`sweepDeadTmp`).
 */
export function ensureSessionTmp(name?: string): string {
  const base = userTmpBase()
  ensurePrivateDir(base)
  if (name === undefined) return base
  const dir = join(base, name)
  ensurePrivateDir(dir)
  if (!claimed.has(dir)) {
    writeFileSync(`${dir}.owner`, `${ownerStamp(process.pid)}\n`, { mode: 0o600 })
    claimed.add(dir)
    if (!swept.has(base)) {
      swept.add(base)
      sweepDeadTmp(base)
    }
  }
  return dir
}

const claimed = new Set<string>()
const swept = new Set<string>()

/** Removes the session folder `name` and its owner file (the session closed). */
export function releaseSessionTmp(name: string): void {
  const dir = sessionTmpPath(name)
  rmSync(dir, { recursive: true, force: true })
  rmSync(`${dir}.owner`, { force: true })
  claimed.delete(dir)
}

/**
 * Removes the session folders under `base` whose owner file names a process that is gone
 * (no such pid, or one started at another time). Only what is ours: an owner file that is a
 * regular file of this uid, a folder that is a real directory of this uid (a symlink is
 * never followed, another user's folder never touched); a folder with no owner file (made
 * by an older dsh) stays. Returns the names removed.
 */
export function sweepDeadTmp(base: string): string[] {
  const uid = typeof process.getuid === 'function' ? process.getuid() : -1
  const removed: string[] = []
  let entries: string[]
  try {
    entries = readdirSync(base)
  } catch {
    return removed
  }
  for (const entry of entries) {
    if (!entry.endsWith('.owner')) continue
    const name = entry.slice(0, -'.owner'.length)
    const dir = join(base, name)
    if (claimed.has(dir)) continue
    try {
      const stamp = readOwned(join(base, entry), uid)
      if (stamp === undefined || !ownerGone(stamp)) continue
      const st = lstatSync(dir, { throwIfNoEntry: false })
      if (st && (!st.isDirectory() || st.uid !== uid)) continue
      // claimed again since it was read (a resume in another process): leave it
      if (readOwned(join(base, entry), uid) !== stamp) continue
      if (st) rmSync(dir, { recursive: true, force: true })
      unlinkSync(join(base, entry))
      removed.push(name)
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
  return removed
}

/** The content of a regular file owned by `uid` (opened without following a symlink), else undefined. */
function readOwned(file: string, uid: number): string | undefined {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW)
  try {
    const st = fstatSync(fd)
    return st.isFile() && (uid < 0 || st.uid === uid) ? readFileSync(fd, 'utf8') : undefined
  } finally {
    closeSync(fd)
  }
}

/** `pid start`: the start time (clock ticks since boot, /proc) tells a reused pid apart; just `pid` where there is no /proc. */
export function ownerStamp(pid: number): string {
  const start = startTimeOf(pid)
  return start === undefined ? String(pid) : `${pid} ${start}`
}

function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

/** Whether the process an owner stamp names is gone; an unreadable stamp is not. */
export function ownerGone(stamp: string): boolean {
  const [pidText, start] = stamp.trim().split(' ')
  const pid = Number(pidText)
  if (!Number.isInteger(pid) || pid <= 0) return false
  if (start !== undefined) {
    const now = startTimeOf(pid)
    if (now !== undefined) return now !== start
  }
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
}

/**
 * Makes a policy's temp root ready: under the user's base, the base and the folder are
 * created and checked as above; elsewhere (a root a caller chose) its parents are created
 * and the folder itself is checked.
 */
export function ensureTmpRoot(dir: string): string {
  const base = userTmpBase()
  if (dirname(dir) === base) return ensureSessionTmp(basename(dir))
  mkdirSync(dirname(dir), { recursive: true, mode: 0o700 })
  ensurePrivateDir(dir)
  return dir
}

/** mkdir 0700 if missing, then: a directory, not a symlink, ours, no group/other access. */
export function ensurePrivateDir(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new DshError('TMP_ROOT_UNSAFE', `cannot create the temp folder ${dir}: ${(error as Error).message}`, { cause: error, hint: 'set TMPDIR to a directory of your own' })
    }
  }
  const st = lstatSync(dir)
  const uid = typeof process.getuid === 'function' ? process.getuid() : st.uid
  const unsafe = st.isSymbolicLink() ? 'is a symbolic link' : !st.isDirectory() ? 'is not a directory' : st.uid !== uid ? `is owned by uid ${st.uid}, not by you (uid ${uid})` : undefined
  if (unsafe) {
    throw new DshError('TMP_ROOT_UNSAFE', `the temp folder ${dir} ${unsafe}; dsh will not use it`, {
      hint: `someone else may have created it to intercept your session: remove it, or set TMPDIR to a directory of your own`,
      data: { dir },
    })
  }
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700)
}
