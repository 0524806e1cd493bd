import { chmodSync, lstatSync, mkdirSync } from 'node:fs'
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

/** Creates (0700) and checks the user's temp base and `name` under it; returns the folder. */
export function ensureSessionTmp(name?: string): string {
  const base = userTmpBase()
  ensurePrivateDir(base)
  if (name === undefined) return base
  const dir = join(base, name)
  ensurePrivateDir(dir)
  return dir
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
