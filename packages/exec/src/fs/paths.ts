import { promises as fsp } from 'node:fs'
import { homedir } from 'node:os'
import path from 'node:path'
import { DshError, type ExecPolicy } from '@dsh/protocol'

/** `p` against `cwd`, normalised; `~` and `~/…` are the home directory. */
export function resolvePath(cwd: string, p: string): string {
  if (p === '~') return homedir()
  if (p.startsWith('~/')) return path.join(homedir(), p.slice(2))
  return path.resolve(cwd, p)
}

export function assertAbsolute(p: string): void {
  if (!path.isAbsolute(p)) throw new DshError('INVALID_PATH', `Expected an absolute path, got "${p}".`)
}

/** True when `p` is `root` or below it (both absolute and normalised). */
export function isInside(root: string, p: string): boolean {
  if (p === root) return true
  const prefix = root.endsWith(path.sep) ? root : root + path.sep
  return p.startsWith(prefix)
}

const MAX_LINKS = 40

/** The lookups a write check needs; the local file system by default, SFTP for a remote world. */
export interface PathOps {
  /** Null when nothing is there. */
  lstat(p: string): Promise<{ isSymbolicLink(): boolean } | null>
  realpath(p: string): Promise<string>
  readlink(p: string): Promise<string>
  /** The path module of the world (POSIX for every world today). */
  path: typeof path.posix
}

const LOCAL_OPS: PathOps = {
  lstat: (p) => fsp.lstat(p).catch(() => null),
  realpath: (p) => fsp.realpath(p),
  readlink: (p) => fsp.readlink(p),
  path,
}

/**
 * The real path a write to `p` would reach: the realpath of the file when it exists (a
 * symlink is followed, a dangling one to where it points), otherwise the realpath of
 * the nearest existing ancestor joined with the missing tail.
 */
export async function realWriteTarget(p: string, depth = 0, ops: PathOps = LOCAL_OPS): Promise<string> {
  if (depth > MAX_LINKS) throw new DshError('PATH_DENIED', `Too many levels of symbolic links at ${p}.`)
  const P = ops.path
  const abs = P.resolve(p)
  const st = await ops.lstat(abs)
  if (st?.isSymbolicLink()) {
    const real = await ops.realpath(abs).catch(() => null)
    if (real) return real
    const link = await ops.readlink(abs)
    return realWriteTarget(P.resolve(P.dirname(abs), link), depth + 1, ops)
  }
  if (st) return ops.realpath(abs)
  const parent = P.dirname(abs)
  if (parent === abs) return abs
  return P.join(await realWriteTarget(parent, depth, ops), P.basename(abs))
}

async function realRoot(root: string, ops: PathOps): Promise<string> {
  return ops.realpath(root).catch(() => ops.path.resolve(root))
}

/** The roots a policy lets a write reach: its writable roots plus the temp root. */
export function writableRootsOf(policy: ExecPolicy): string[] {
  const roots = [...policy.writableRoots]
  if (policy.tmpRoot && !roots.includes(policy.tmpRoot)) roots.push(policy.tmpRoot)
  return roots
}

/** Returns the real target of a write to `p`, or throws PATH_DENIED with a message the model can act on. */
export async function checkWritePath(p: string, policy: ExecPolicy, ops: PathOps = LOCAL_OPS): Promise<string> {
  assertAbsolute(p)
  const target = await realWriteTarget(p, 0, ops)
  switch (policy.mode) {
    case 'danger-full-access':
      return target
    case 'read-only':
      throw new DshError('PATH_DENIED',
        `Cannot write ${p}: this session is in read-only mode, so no file may be written. `
        + 'Do not retry the write; report what you would change, or ask the user to switch the permission mode.')
    case 'workspace-write': {
      const roots = writableRootsOf(policy)
      for (const root of roots) if (isInside(await realRoot(root, ops), target)) return target
      const via = target === ops.path.resolve(p) ? '' : ` (it resolves to ${target})`
      throw new DshError('PATH_DENIED',
        `Cannot write ${p}${via}: outside the writable roots (${roots.join(', ')}) of the workspace-write sandbox. `
        + 'Write inside the workspace instead, or ask the user to grant access.')
    }
  }
}
