import { randomBytes } from 'node:crypto'
import { constants as fsConstants, type Stats, promises as fsp } from 'node:fs'
import path from 'node:path'
import { Service, type Context } from '@deepseek-ai/cordis'
import { DshError, type ExecPolicy } from '@dsh/protocol'
import { assertAbsolute, checkWritePath, resolvePath } from './paths.js'
import { SecretFiles } from './secrets.js'
import type { DirEntry, FileStat, FileType, FsSeam } from './types.js'

function typeOf(st: Stats | import('node:fs').Dirent): FileType {
  if (st.isFile()) return 'file'
  if (st.isDirectory()) return 'directory'
  if (st.isSymbolicLink()) return 'symlink'
  return 'other'
}

function toStat(st: Stats): FileStat {
  return { type: typeOf(st), size: st.size, mtimeMs: st.mtimeMs, mode: st.mode & 0o7777 }
}

/** Node errors → stable DshError codes (the message names the path). */
export function fsError(error: unknown, p: string): DshError {
  if (error instanceof DshError) return error
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  switch (code) {
    case 'ENOENT': return new DshError('FILE_NOT_FOUND', `No such file or directory: ${p}`, { cause: error })
    case 'EISDIR': return new DshError('IS_DIRECTORY', `${p} is a directory.`, { cause: error })
    case 'ENOTDIR': return new DshError('NOT_A_DIRECTORY', `${p} is not a directory (or a parent of it is not).`, { cause: error })
    case 'EACCES': case 'EPERM': return new DshError('PERMISSION_DENIED', `Permission denied: ${p}`, { cause: error })
    case 'EROFS': return new DshError('PERMISSION_DENIED', `Read-only file system: ${p}`, { cause: error })
    default: return new DshError('FS_ERROR', `${p}: ${(error as Error)?.message ?? String(error)}`, { cause: error })
  }
}

async function wrap<T>(p: string, body: () => Promise<T>): Promise<T> {
  try {
    assertAbsolute(p)
    return await body()
  } catch (error) {
    throw fsError(error, p)
  }
}

/** The local provider of `ctx.fs`. */
export class LocalFs extends Service implements FsSeam {
  constructor(ctx: Context, readonly secrets: SecretFiles = new SecretFiles(undefined)) {
    super(ctx, 'fs')
  }

  async isSecret(p: string): Promise<boolean> {
    return (await this.secrets.match(p)) !== undefined
  }

  resolve(cwd: string, p: string): string {
    return resolvePath(cwd, p)
  }

  async stat(p: string): Promise<FileStat | null> {
    assertAbsolute(p)
    const st = await fsp.stat(p).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR' || error.code === 'ELOOP') return null
      throw fsError(error, p)
    })
    return st && toStat(st)
  }

  async lstat(p: string): Promise<FileStat | null> {
    assertAbsolute(p)
    const st = await fsp.lstat(p).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null
      throw fsError(error, p)
    })
    return st && toStat(st)
  }

  readFile(p: string, options: { maxBytes?: number } = {}): Promise<Uint8Array> {
    return wrap(p, async () => {
      // stat before open: opening a FIFO blocks until a writer comes, and a device (/dev/zero)
      // has no size to cap — only regular files are read
      const before = await fsp.stat(p)
      if (before.isDirectory()) throw new DshError('IS_DIRECTORY', `${p} is a directory.`)
      if (!before.isFile()) throw new DshError('NOT_A_FILE', `${p} is not a regular file (a device, FIFO or socket); it cannot be read as a file.`)
      await this.secrets.check(p, 'read')
      const handle = await fsp.open(p, 'r')
      try {
        const st = await handle.stat()
        if (!st.isFile()) throw new DshError('NOT_A_FILE', `${p} is not a regular file.`)
        if (options.maxBytes !== undefined && st.size > options.maxBytes) {
          throw new DshError('FILE_TOO_LARGE', `${p} is ${st.size} bytes (limit ${options.maxBytes}).`, { data: { size: st.size } })
        }
        return await handle.readFile()
      } finally {
        await handle.close()
      }
    })
  }

  readdir(p: string): Promise<DirEntry[]> {
    return wrap(p, async () => (await fsp.readdir(p, { withFileTypes: true })).map((d) => ({ name: d.name, type: typeOf(d) })))
  }

  realpath(p: string): Promise<string> {
    return wrap(p, () => fsp.realpath(p))
  }

  checkWrite(p: string, policy: ExecPolicy): Promise<string> {
    return wrap(p, () => this.checkWritePath(p, policy))
  }

  private async checkWritePath(p: string, policy: ExecPolicy): Promise<string> {
    const target = await checkWritePath(p, policy)
    await this.secrets.check(target, 'write')
    return target
  }

  mkdir(p: string, policy: ExecPolicy): Promise<void> {
    return wrap(p, async () => {
      const target = await this.checkWritePath(p, policy)
      await makeDirs(target)
    })
  }

  write(p: string, data: string | Uint8Array, policy: ExecPolicy): Promise<FileStat> {
    return wrap(p, async () => {
      const checked = await this.checkWritePath(p, policy)
      await makeDirs(path.dirname(checked))
      // The checked directory is pinned (an fd) and every later step goes through it, so a
      // directory swapped for a symlink after the check cannot redirect the write outside.
      const pinned = await pinDirectory(path.dirname(checked), p)
      try {
        return await this.writeIn(pinned.dir, path.basename(checked), p, data)
      } finally {
        await pinned.close()
      }
    })
  }

  /** Writes `name` in `dir` atomically: a fresh temp file (fsynced), then a rename over the target. */
  private async writeIn(dir: string, name: string, p: string, data: string | Uint8Array): Promise<FileStat> {
    const target = path.join(dir, name)
    const existing = await fsp.stat(target).catch(() => null)
    if (existing?.isDirectory()) throw new DshError('IS_DIRECTORY', `${p} is a directory; cannot write a file there.`)
    const temp = path.join(dir, `.${name}.${randomBytes(6).toString('hex')}.dsh-tmp`)
    // 'wx': the temp name is fresh, so nothing (no link) can be written through.
    const handle = await fsp.open(temp, 'wx', existing ? 0o600 : 0o666)
    try {
      try {
        await handle.writeFile(data)
        if (existing) {
          await handle.chmod(existing.mode & 0o7777)
          await handle.chown(existing.uid, existing.gid).catch(() => undefined)
        }
        await handle.sync()
      } finally {
        await handle.close()
      }
      await fsp.rename(temp, target)
    } catch (error) {
      await fsp.unlink(temp).catch(() => undefined)
      throw error
    }
    return toStat(await fsp.stat(target))
  }
}

/**
 * `mkdir -p` that always ends. Node's `mkdir(…, {recursive: true})` never returns for a path
 * under /proc/self (mkdir there fails ENOENT while the parent exists, and it retries forever),
 * which a model could reach in danger-full-access. Each level is tried once after its parent.
 */
export async function makeDirs(dir: string): Promise<void> {
  try {
    await fsp.mkdir(dir)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') {
      if ((await fsp.stat(dir)).isDirectory()) return
      throw error
    }
    const parent = path.dirname(dir)
    if (code !== 'ENOENT' || parent === dir) throw error
    await makeDirs(parent)
    await fsp.mkdir(dir).catch(async (again: NodeJS.ErrnoException) => {
      if (again.code !== 'EEXIST' || !(await fsp.stat(dir)).isDirectory()) throw again
    })
  }
}

/**
 * Opens `dir` (no symlink as its last component) and checks, through /proc, that the
 * opened directory is still `dir`: the path `/proc/self/fd/N` then names that directory
 * whatever happens to the path later. PATH_DENIED when it moved (a symlink race). Without
 * /proc (not Linux) the path itself is used.
 */
async function pinDirectory(dir: string, shown: string): Promise<{ dir: string; close(): Promise<void> }> {
  if (process.platform !== 'linux') return { dir, close: async () => undefined }
  const handle = await fsp.open(dir, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ELOOP' || error.code === 'ENOTDIR') throw raced(shown)
    throw error
  })
  const pinned = `/proc/self/fd/${handle.fd}`
  if ((await fsp.readlink(pinned).catch(() => '')) !== dir) {
    await handle.close()
    throw raced(shown)
  }
  return { dir: pinned, close: () => handle.close() }
}

function raced(shown: string): DshError {
  return new DshError('PATH_DENIED', `${shown}: a directory on its path changed while writing (a symlink swap); nothing was written`, {
    hint: 'the path must stay inside the writable roots for the whole write',
  })
}
