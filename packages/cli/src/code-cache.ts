import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statfsSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

/**
 * V8 code cache entries of the CommonJS bundle (decision 0085), one file per bundle file in
 * `$DSH_HOME/cache/code/<key>/`, where `<key>` hashes the build id (a hash of every bundle
 * file, written by the build), the Node version and architecture, and the node flags of the
 * process. V8 checks little of a cache itself (its version, its flags and the *length* of the
 * source), so an entry is only ever looked up for the exact build that wrote it, and each
 * entry carries a SHA-256 of its data: a truncated, corrupt or foreign file is a miss, never
 * handed to V8. Writes go to a temporary file renamed into place (0600 in 0700 directories),
 * and only while the file system keeps {@link RESERVE} bytes free (the cache must never take
 * the space a session log needs); every failure to read or write is a miss, never an error.
 */
export interface CodeCache {
  /** The cached data for bundle file `name`, or undefined (missing, or its checksum fails). */
  read(name: string): Buffer | undefined
  /** Stores `data` for bundle file `name`; failures are ignored. */
  write(name: string, data: Buffer): void
  /** The directory entries live in. */
  readonly dir: string
}

const SUM = 32
/** Free bytes the file system must have for the cache to write at all. */
export const RESERVE = 256 * 1024 * 1024
/** Entry directories of other builds kept beside the current one (newest first); older ones are removed. */
const KEEP_OTHERS = 3

/** createHash, not crypto.hash: that came in Node 20.12 and the engines field allows 20.10. */
function sha256(data: string | Buffer): Buffer {
  return createHash('sha256').update(data).digest()
}

export function cacheKey(buildId: string, flags: readonly string[]): string {
  return sha256(JSON.stringify([1, buildId, process.version, process.arch, flags])).toString('hex').slice(0, 32)
}

export function openCodeCache(root: string, key: string): CodeCache {
  const dir = join(root, key)
  let made: boolean | undefined
  return {
    dir,
    read(name) {
      let file: Buffer
      try {
        file = readFileSync(join(dir, `${name}.bin`))
      } catch {
        return undefined
      }
      if (file.length <= SUM) return undefined
      const data = file.subarray(SUM)
      return sha256(data).equals(file.subarray(0, SUM)) ? data : undefined
    },
    write(name, data) {
      made ??= roomFor(root) && make(root, key)
      if (!made) return
      const tmp = join(dir, `.${name}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
      try {
        writeFileSync(tmp, Buffer.concat([sha256(data), data]), { mode: 0o600 })
        renameSync(tmp, join(dir, `${name}.bin`))
      } catch {
        // a read-only or full home: the next launch compiles again
        try { unlinkSync(tmp) } catch { /* never written */ }
      }
    },
  }
}

/** True when the file system holding `path` (or its nearest existing ancestor) has {@link RESERVE} bytes free. */
function roomFor(path: string): boolean {
  try {
    let at = path
    while (!existsSync(at) && dirname(at) !== at) at = dirname(at)
    const fs = statfsSync(at)
    return fs.bavail * fs.bsize >= RESERVE
  } catch {
    return false
  }
}

function make(root: string, key: string): boolean {
  try {
    mkdirSync(join(root, key), { recursive: true, mode: 0o700 })
    prune(root, key)
    return true
  } catch {
    return false
  }
}

/** Removes the entry directories of older builds, keeping the current one and the newest few others. */
function prune(root: string, key: string): void {
  try {
    utimesSync(join(root, key), new Date(), new Date())
    const others = readdirSync(root).filter((d) => d !== key).map((d) => {
      try {
        return { d, t: statSync(join(root, d)).mtimeMs }
      } catch {
        return { d, t: 0 }
      }
    }).sort((a, b) => b.t - a.t)
    for (const { d } of others.slice(KEEP_OTHERS)) rmSync(join(root, d), { recursive: true, force: true })
  } catch {
    // best effort
  }
}
