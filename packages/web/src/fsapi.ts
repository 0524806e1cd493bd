import { mkdir, readdir, stat } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { DshError } from '@dsh/protocol'
import { z } from 'zod'

/** The workspace picker's helpers (loopback only, behind the token like every /api call). */
export const FsListParams = z.strictObject({ path: z.string().min(1).max(4096).optional(), hidden: z.boolean().optional() })
export const FsMkdirParams = z.strictObject({ path: z.string().min(1).max(4096) })

export interface DirListing {
  path: string
  parent: string | null
  entries: { name: string; path: string }[]
}

function absolute(path: string): string {
  if (!isAbsolute(path)) throw new DshError('INVALID_PARAMS', `path must be absolute, got ${JSON.stringify(path.slice(0, 200))}`, { data: { issues: [{ path: 'params.path', message: 'must be an absolute path' }] } })
  return resolve(path)
}

/** The subdirectories of `path` (default: the home directory), sorted by name. */
export async function listDirectory(params: z.output<typeof FsListParams>): Promise<DirListing> {
  const path = absolute(params.path ?? homedir())
  const info = await stat(path).catch(() => null)
  if (!info) throw new DshError('WORKSPACE_INVALID', `${path} does not exist`)
  if (!info.isDirectory()) throw new DshError('WORKSPACE_INVALID', `${path} is not a directory`)
  const dirents = await readdir(path, { withFileTypes: true }).catch((cause: unknown) => {
    throw new DshError('WORKSPACE_INVALID', `${path} cannot be read`, { cause })
  })
  const entries = dirents
    .filter((d) => d.isDirectory() && (params.hidden || !d.name.startsWith('.')))
    .map((d) => ({ name: d.name, path: join(path, d.name) }))
    .sort((a, b) => a.name.localeCompare(b.name))
  return { path, parent: path === '/' ? null : dirname(path), entries }
}

/** Creates `path` (and missing parents); refused when it exists as a file. */
export async function makeDirectory(params: z.output<typeof FsMkdirParams>): Promise<{ path: string }> {
  const path = absolute(params.path)
  const info = await stat(path).catch(() => null)
  if (info && !info.isDirectory()) throw new DshError('WORKSPACE_INVALID', `${path} exists and is not a directory`)
  await mkdir(path, { recursive: true }).catch((cause: unknown) => {
    throw new DshError('WORKSPACE_INVALID', `cannot create ${path}: ${(cause as Error).message}`, { cause })
  })
  return { path }
}
