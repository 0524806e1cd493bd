import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { DshError, type ExecPolicy } from '@dsh/protocol'
import { assertAbsolute, checkWritePath, type DirEntry, type FileStat, type FileType, type FsSeam, type PathOps } from '@dsh/exec'
import type { Attributes, SFTPWrapper } from 'ssh2'
import type { SshConnection } from './connection.js'

const P = path.posix
const S_IFMT = 0o170000
const CHUNK = 32 * 1024

function typeOfMode(mode: number): FileType {
  switch (mode & S_IFMT) {
    case 0o100000: return 'file'
    case 0o040000: return 'directory'
    case 0o120000: return 'symlink'
    default: return 'other'
  }
}

function toStat(a: Attributes): FileStat {
  return { type: typeOfMode(a.mode), size: a.size, mtimeMs: a.mtime * 1000, mode: a.mode & 0o7777 }
}

/** SFTP status codes → the seam's DshError codes (the message names the path). */
export function sftpError(error: unknown, p: string): DshError {
  if (error instanceof DshError) return error
  const code = (error as { code?: number | string } | undefined)?.code
  const message = (error as Error | undefined)?.message ?? String(error)
  if (code === 2) return new DshError('FILE_NOT_FOUND', `No such file or directory: ${p}`, { cause: error })
  if (code === 3) return new DshError('PERMISSION_DENIED', `Permission denied: ${p}`, { cause: error })
  return new DshError('FS_ERROR', `${p}: ${message}`, { cause: error })
}

type Cb<T> = (error: Error | undefined | null, value: T) => void
/** Calls an SFTP method, failing with WORLD_CONNECTION_LOST when the connection drops first. */
function call<T>(conn: SshConnection, sftp: SFTPWrapper, body: (cb: Cb<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const done = conn.track(reject, sftp)
    body((error, value) => {
      done()
      if (error) reject(error)
      else resolve(value)
    })
  })
}

/**
 * `ctx.fs` over SFTP. Same contract as the local provider: writes are policy-checked on
 * the remote's real paths, land by a fresh temp file + `posix-rename@openssh.com`, and
 * are made durable with `fsync@openssh.com` first. `~` is the remote login's home.
 * mtimes have the protocol's one-second resolution.
 */
export class SshFs implements FsSeam {
  constructor(
    private readonly conn: SshConnection,
    private readonly home: string,
    /** The session policy mapped onto this world (its temp root is remote). */
    private readonly mapPolicy: (policy: ExecPolicy) => ExecPolicy = (p) => p,
  ) {}

  /** dsh's secret files ($DSH_HOME's credential store, patch files) live on the harness host, never in a remote world. */
  async isSecret(_path: string): Promise<boolean> {
    return false
  }

  private async sftp(): Promise<SFTPWrapper> {
    return this.conn.sftp()
  }

  private async attrs(p: string, follow: boolean): Promise<Attributes | null> {
    const sftp = await this.sftp()
    try {
      return await call<Attributes>(this.conn, sftp, (cb) => (follow ? sftp.stat(p, cb) : sftp.lstat(p, cb)))
    } catch (error) {
      if ((error as { code?: number }).code === 2) return null
      throw sftpError(error, p)
    }
  }

  private ops(sftp: SFTPWrapper): PathOps {
    return {
      lstat: (p) => call<Attributes>(this.conn, sftp, (cb) => sftp.lstat(p, cb)).then(
        (a) => ({ isSymbolicLink: () => typeOfMode(a.mode) === 'symlink' }), () => null),
      realpath: (p) => call<string>(this.conn, sftp, (cb) => sftp.realpath(p, cb)),
      readlink: (p) => call<string>(this.conn, sftp, (cb) => sftp.readlink(p, cb)),
      path: P,
    }
  }

  resolve(cwd: string, p: string): string {
    if (p === '~') return this.home
    if (p.startsWith('~/')) return P.join(this.home, p.slice(2))
    return P.resolve(cwd, p)
  }

  async stat(p: string): Promise<FileStat | null> {
    assertAbsolute(p)
    const a = await this.attrs(p, true)
    return a && toStat(a)
  }

  async lstat(p: string): Promise<FileStat | null> {
    assertAbsolute(p)
    const a = await this.attrs(p, false)
    return a && toStat(a)
  }

  async readFile(p: string, options: { maxBytes?: number } = {}): Promise<Uint8Array> {
    const st = await this.stat(p)
    if (!st) throw new DshError('FILE_NOT_FOUND', `No such file or directory: ${p}`)
    if (st.type === 'directory') throw new DshError('IS_DIRECTORY', `${p} is a directory.`)
    if (st.type !== 'file') throw new DshError('NOT_A_FILE', `${p} is not a regular file (a device, FIFO or socket); it cannot be read as a file.`)
    if (options.maxBytes !== undefined && st.size > options.maxBytes) {
      throw new DshError('FILE_TOO_LARGE', `${p} is ${st.size} bytes (limit ${options.maxBytes}).`, { data: { size: st.size } })
    }
    const sftp = await this.sftp()
    return call<Buffer>(this.conn, sftp, (cb) => sftp.readFile(p, cb)).catch((error: unknown) => { throw sftpError(error, p) })
  }

  async readdir(p: string): Promise<DirEntry[]> {
    const st = await this.stat(p)
    if (!st) throw new DshError('FILE_NOT_FOUND', `No such file or directory: ${p}`)
    if (st.type !== 'directory') throw new DshError('NOT_A_DIRECTORY', `${p} is not a directory (or a parent of it is not).`)
    const sftp = await this.sftp()
    const list = await call<{ filename: string; attrs: Attributes }[]>(this.conn, sftp, (cb) => sftp.readdir(p, cb))
      .catch((error: unknown) => { throw sftpError(error, p) })
    return list.filter((e) => e.filename !== '.' && e.filename !== '..').map((e) => ({ name: e.filename, type: typeOfMode(e.attrs.mode) }))
  }

  async realpath(p: string): Promise<string> {
    assertAbsolute(p)
    if (!(await this.attrs(p, true))) throw new DshError('FILE_NOT_FOUND', `No such file or directory: ${p}`)
    const sftp = await this.sftp()
    return call<string>(this.conn, sftp, (cb) => sftp.realpath(p, cb)).catch((error: unknown) => { throw sftpError(error, p) })
  }

  async checkWrite(p: string, policy: ExecPolicy): Promise<string> {
    const sftp = await this.sftp()
    return checkWritePath(p, this.mapPolicy(policy), this.ops(sftp))
  }

  private async mkdirp(sftp: SFTPWrapper, dir: string): Promise<void> {
    const st = await this.attrs(dir, true)
    if (st) {
      if (typeOfMode(st.mode) !== 'directory') throw new DshError('NOT_A_DIRECTORY', `${dir} is not a directory (or a parent of it is not).`)
      return
    }
    await this.mkdirp(sftp, P.dirname(dir))
    await call<void>(this.conn, sftp, (cb) => sftp.mkdir(dir, (e) => cb(e, undefined))).catch(async (error: unknown) => {
      if (!(await this.attrs(dir, true))) throw sftpError(error, dir) // lost a race to a concurrent mkdir: fine
    })
  }

  /** `mkdir -p` with no policy check (for the operator's own setup, e.g. a batch task's root). */
  async ensureDir(p: string): Promise<void> {
    assertAbsolute(p)
    await this.mkdirp(await this.sftp(), p)
  }

  async mkdir(p: string, policy: ExecPolicy): Promise<void> {
    const target = await this.checkWrite(p, policy)
    await this.mkdirp(await this.sftp(), target)
  }

  async write(p: string, data: string | Uint8Array, policy: ExecPolicy): Promise<FileStat> {
    const target = await this.checkWrite(p, policy)
    const sftp = await this.sftp()
    const dir = P.dirname(target)
    await this.mkdirp(sftp, dir)
    const existing = await this.attrs(target, true)
    if (existing && typeOfMode(existing.mode) === 'directory') throw new DshError('IS_DIRECTORY', `${p} is a directory; cannot write a file there.`)
    const temp = P.join(dir, `.${P.basename(target)}.${randomBytes(6).toString('hex')}.dsh-tmp`)
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    const c = <T>(body: (cb: Cb<T>) => void) => call<T>(this.conn, sftp, body)
    // 'wx': the temp name is fresh, so nothing (no link) can be written through
    const handle = await c<Buffer>((cb) => sftp.open(temp, 'wx', { mode: existing ? 0o600 : 0o644 }, cb)).catch((error: unknown) => { throw sftpError(error, p) })
    try {
      try {
        for (let off = 0; off < bytes.length; off += CHUNK) {
          const len = Math.min(CHUNK, bytes.length - off)
          await c<void>((cb) => sftp.write(handle, bytes, off, len, off, (e) => cb(e, undefined)))
        }
        if (existing) {
          await c<void>((cb) => sftp.fchmod(handle, existing.mode & 0o7777, (e) => cb(e, undefined)))
          await c<void>((cb) => sftp.fchown(handle, existing.uid, existing.gid, (e) => cb(e, undefined))).catch(() => undefined)
        }
        await c<void>((cb) => sftp.ext_openssh_fsync(handle, (e) => cb(e, undefined)))
      } finally {
        await c<void>((cb) => sftp.close(handle, (e) => cb(e, undefined))).catch(() => undefined)
      }
      await c<void>((cb) => sftp.ext_openssh_rename(temp, target, (e) => cb(e, undefined)))
    } catch (error) {
      await c<void>((cb) => sftp.unlink(temp, (e) => cb(e, undefined))).catch(() => undefined)
      throw sftpError(error, p)
    }
    const st = await this.attrs(target, true)
    if (!st) throw new DshError('FS_ERROR', `${p}: the file vanished right after it was written`)
    return toStat(st)
  }
}
