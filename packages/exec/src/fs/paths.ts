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

/**
 * The real path a write to `p` would reach: the realpath of the file when it exists (a
 * symlink is followed, a dangling one to where it points), otherwise the realpath of
 * the nearest existing ancestor joined with the missing tail.
 */
export async function realWriteTarget(p: string, depth = 0): Promise<string> {
  if (depth > MAX_LINKS) throw new DshError('PATH_DENIED', `Too many levels of symbolic links at ${p}.`)
  const abs = path.resolve(p)
  const st = await fsp.lstat(abs).catch(() => null)
  if (st?.isSymbolicLink()) {
    const real = await fsp.realpath(abs).catch(() => null)
    if (real) return real
    const link = await fsp.readlink(abs)
    return realWriteTarget(path.resolve(path.dirname(abs), link), depth + 1)
  }
  if (st) return fsp.realpath(abs)
  const parent = path.dirname(abs)
  if (parent === abs) return abs
  return path.join(await realWriteTarget(parent, depth), path.basename(abs))
}

async function realRoot(root: string): Promise<string> {
  return fsp.realpath(root).catch(() => path.resolve(root))
}

/** The roots a policy lets a write reach: its writable roots plus the temp root. */
export function writableRootsOf(policy: ExecPolicy): string[] {
  const roots = [...policy.writableRoots]
  if (policy.tmpRoot && !roots.includes(policy.tmpRoot)) roots.push(policy.tmpRoot)
  return roots
}

/** Returns the real target of a write to `p`, or throws PATH_DENIED with a message the model can act on. */
export async function checkWritePath(p: string, policy: ExecPolicy): Promise<string> {
  assertAbsolute(p)
  const target = await realWriteTarget(p)
  switch (policy.mode) {
    case 'danger-full-access':
      return target
    case 'read-only':
      throw new DshError('PATH_DENIED',
        `Cannot write ${p}: this session is in read-only mode, so no file may be written. `
        + 'Do not retry the write; report what you would change, or ask the user to switch the permission mode.')
    case 'workspace-write': {
      const roots = writableRootsOf(policy)
      for (const root of roots) if (isInside(await realRoot(root), target)) return target
      const via = target === path.resolve(p) ? '' : ` (it resolves to ${target})`
      throw new DshError('PATH_DENIED',
        `Cannot write ${p}${via}: outside the writable roots (${roots.join(', ')}) of the workspace-write sandbox. `
        + 'Write inside the workspace instead, or ask the user to grant access.')
    }
  }
}
