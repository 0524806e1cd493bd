import { DshError } from '@dsh/protocol'
import path from 'node:path'

/** Where a world lives: `ssh://USER@HOST[:PORT]/ABS/ROOT`. */
export interface WorldTarget {
  user: string
  host: string
  port: number
  /** Absolute, normalised remote directory: the workspace (or the parent of per-task workspaces). */
  root: string
}

/** What selects a world: the URL plus the local key files (paths, never key material). */
export interface WorldSpec {
  url: string
  /** Private key file; default `~/.ssh/id_ed25519`. */
  identity?: string
  /** OpenSSH known_hosts file; default `~/.ssh/known_hosts`. */
  knownHosts?: string
}

const USAGE_HINT = 'use ssh://USER@HOST[:PORT]/ABSOLUTE/ROOT, e.g. ssh://agent@10.0.0.5:2222/srv/work'

/** Parses a world URL; WORLD_URL names what is wrong. */
export function parseWorldUrl(url: string): WorldTarget {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    throw new DshError('WORLD_URL', `"${url}" is not a URL`, { hint: USAGE_HINT })
  }
  if (u.protocol !== 'ssh:') throw new DshError('WORLD_URL', `world "${url}": the scheme must be ssh://, got ${u.protocol}//`, { hint: USAGE_HINT })
  if (!u.username) throw new DshError('WORLD_URL', `world "${url}" names no user`, { hint: USAGE_HINT })
  if (u.password) throw new DshError('WORLD_URL', `world "${url}" carries a password; only key authentication is supported`, { hint: USAGE_HINT })
  if (!u.hostname) throw new DshError('WORLD_URL', `world "${url}" names no host`, { hint: USAGE_HINT })
  if (u.search || u.hash) throw new DshError('WORLD_URL', `world "${url}": no query or fragment allowed`, { hint: USAGE_HINT })
  const root = decodeURIComponent(u.pathname)
  if (!root || root === '/') throw new DshError('WORLD_URL', `world "${url}" names no root directory (the path after the host)`, { hint: USAGE_HINT })
  const port = u.port ? Number(u.port) : 22
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname
  return { user: decodeURIComponent(u.username), host, port, root: path.posix.normalize(root).replace(/(.)\/$/, '$1') }
}

/** The canonical URL of a target (shown in /status, results and errors). */
export function formatTarget(t: WorldTarget, root = t.root): string {
  const host = t.host.includes(':') ? `[${t.host}]` : t.host
  return `ssh://${t.user}@${host}${t.port === 22 ? '' : `:${t.port}`}${root}`
}
