import { randomBytes } from 'node:crypto'
import { type Stats, promises as fsp } from 'node:fs'
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
      await fsp.mkdir(target, { recursive: true })
    })
  }

  write(p: string, data: string | Uint8Array, policy: ExecPolicy): Promise<FileStat> {
    return wrap(p, async () => {
      const target = await this.checkWritePath(p, policy)
      const dir = path.dirname(target)
      await fsp.mkdir(dir, { recursive: true })
      const existing = await fsp.stat(target).catch(() => null)
      if (existing?.isDirectory()) throw new DshError('IS_DIRECTORY', `${p} is a directory; cannot write a file there.`)
      const temp = path.join(dir, `.${path.basename(target)}.${randomBytes(6).toString('hex')}.dsh-tmp`)
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
    })
  }
}
