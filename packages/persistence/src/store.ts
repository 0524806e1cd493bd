import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { copyFile, mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { Service } from '@deepseek-ai/cordis'
import type { Context } from '@deepseek-ai/cordis'
import { DshError, isDshError, SESSION_FORMAT_VERSION } from '@dsh/protocol'
import type { SessionEvent, SessionHeader } from '@dsh/protocol'
import { assertSessionId, isValidSessionId, latestTitle } from '@dsh/core'
import type { LoadedSession, SessionInfo, SessionSink, SessionStore } from '@dsh/core'
import { parseSessionFile, serializeEvent, serializeHeader } from './format.js'
import { acquireLock, inspectLock } from './lock.js'
import { readSessionInfo } from './listing.js'
import { appendAll, JsonlSink, syncPath, writeMeta } from './sink.js'
import type { SessionMeta } from './sink.js'
import { writeFailed } from './write-error.js'

export interface JsonlStoreConfig {
  /** Defaults to `$DSH_HOME/sessions` (an unset or empty DSH_HOME is `~/.dsh`, as resolveHome). */
  dir?: string | undefined
}

export function defaultSessionsDir(env: NodeJS.ProcessEnv = process.env): string {
  const home = env['DSH_HOME']
  return join(home ? resolve(home) : join(homedir(), '.dsh'), 'sessions')
}

export function sessionPaths(dir: string, id: string) {
  assertSessionId(id)
  const file = join(dir, `${id}.jsonl`)
  return { file, lock: join(dir, `${id}.lock`), meta: join(dir, `${id}.meta.json`), backup: (v: number) => `${file}.v${v}.bak` }
}

const APPEND = constants.O_WRONLY | constants.O_APPEND

/**
 * `ctx.sessionStore` on JSONL files: `<dir>/<id>.jsonl` (header line, then one event per
 * line), `<id>.lock` (the writer lock), `<id>.meta.json` (title cache for `list()`),
 * `<id>.jsonl.v<N>.bak` (the original of a migrated file). See `parseSessionFile` for load
 * rules, `acquireLock` for locking, `JsonlSink` for durability. Load reports what it did to
 * the stored form as `notices` (the session manager logs each as a `notice` event); a
 * migration is also logged on `ctx.logger('persistence')`.
 */
export class JsonlSessionStore extends Service implements SessionStore {
  readonly dir: string
  private readonly sinks = new Set<JsonlSink>()
  private readonly logger: ReturnType<Context['logger']>

  constructor(ctx: Context, config: JsonlStoreConfig = {}) {
    super(ctx, 'sessionStore')
    this.dir = resolve(config.dir ?? defaultSessionsDir())
    this.logger = ctx.logger('persistence')
  }

  /** On a failure nothing is left behind (no file, no lock); write errors are SESSION_WRITE_FAILED. */
  async create(header: SessionHeader): Promise<SessionSink> {
    const paths = sessionPaths(this.dir, header.id)
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 })
    } catch (error) {
      throw writeFailed(header.id, `creating ${this.dir}`, error, false)
    }
    const release = await acquireLock(paths.lock, header.id).catch((error: unknown) => { throw isDshError(error) ? error : writeFailed(header.id, `taking the lock ${paths.lock}`, error, false) })
    let handle: FileHandle
    try {
      handle = await open(paths.file, APPEND | constants.O_CREAT | constants.O_EXCL, 0o600)
    } catch (error) {
      await release()
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new DshError('SESSION_EXISTS', `session ${header.id} already exists (${paths.file})`)
      }
      throw writeFailed(header.id, `creating ${paths.file}`, error, false)
    }
    const head = Buffer.from(serializeHeader(header))
    try {
      await appendAll(handle, head)
      await handle.sync()
      await syncPath(this.dir)
    } catch (error) {
      await handle.close().catch(() => undefined)
      await unlink(paths.file).catch(() => undefined)
      await release()
      throw writeFailed(header.id, `writing ${paths.file}`, error, false)
    }
    return this.track(header.id, handle, head.length, paths.meta, release)
  }

  async open(id: string): Promise<LoadedSession & { sink: SessionSink }> {
    const paths = sessionPaths(this.dir, id)
    await this.mustExist(id, paths.file)
    const release = await acquireLock(paths.lock, id).catch((error: unknown) => { throw isDshError(error) ? error : writeFailed(id, `taking the lock ${paths.lock}`, error) })
    try {
      const parsed = parseSessionFile(await readFile(paths.file), paths.file, id)
      const notices = parsed.notices
      if (parsed.version < SESSION_FORMAT_VERSION) {
        const backup = await this.rewrite(paths.file, paths.backup(parsed.version), parsed.header, parsed.events)
        const line = `session ${id}: migrated ${paths.file} from format version ${parsed.version} to ${SESSION_FORMAT_VERSION}; the original is kept as ${backup}`
        this.logger.info(line)
        notices.push(line)
      }
      const handle = await open(paths.file, APPEND)
      let size: number
      try {
        if (parsed.version === SESSION_FORMAT_VERSION && parsed.tornBytes > 0) {
          await handle.truncate(parsed.validBytes)
          await handle.sync()
        }
        size = (await handle.stat()).size
        // a title cache that cannot be written (full disk) is rebuilt next time
        await this.refreshMeta(paths.meta, parsed.events).catch((error: Error) => this.logger.warn(`could not update ${paths.meta}: ${error.message}`))
      } catch (error) {
        await handle.close()
        throw writeFailed(id, `repairing ${paths.file}`, error)
      }
      const sink = this.track(id, handle, size, paths.meta, release)
      return { header: parsed.header, events: parsed.events, notices, sink }
    } catch (error) {
      await release()
      throw error
    }
  }

  /** Loads without the lock; an old format is migrated in memory only (the file is rewritten on the next `open`). */
  async read(id: string): Promise<LoadedSession> {
    const paths = sessionPaths(this.dir, id)
    await this.mustExist(id, paths.file)
    const parsed = parseSessionFile(await readFile(paths.file), paths.file, id)
    if (parsed.version < SESSION_FORMAT_VERSION) {
      parsed.notices.push(`session ${id}: read ${paths.file} as format version ${parsed.version} (migrated in memory; the file is rewritten when the session is next opened)`)
    }
    return { header: parsed.header, events: parsed.events, notices: parsed.notices }
  }

  /**
   * Reads each file's header line and last line (its seq gives the event count), the mtime
   * (updatedAt) and the `<id>.meta.json` title; never whole files, except version-0 files.
   * Unreadable files are skipped with a warning. Newest updatedAt first.
   */
  async list(filter?: { cwd?: string }): Promise<SessionInfo[]> {
    let names: string[]
    try {
      names = await readdir(this.dir)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw error
    }
    const ids = names.filter((n) => n.endsWith('.jsonl')).map((n) => n.slice(0, -'.jsonl'.length)).filter(isValidSessionId)
    const out: SessionInfo[] = []
    for (let i = 0; i < ids.length; i += 16) {
      const batch = await Promise.all(ids.slice(i, i + 16).map((id) => this.info(id)))
      for (const info of batch) if (info && (filter?.cwd === undefined || info.cwd === filter.cwd)) out.push(info)
    }
    return out.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : -1))
  }

  async isLocked(id: string): Promise<boolean> {
    const state = await inspectLock(sessionPaths(this.dir, id).lock)
    return state.kind !== 'free' && state.kind !== 'stale'
  }

  /** Removes the log, its title cache and migration backups, under the writer lock (SESSION_LOCKED while a live writer holds it). */
  async delete(id: string): Promise<void> {
    const paths = sessionPaths(this.dir, id)
    await this.mustExist(id, paths.file)
    const release = await acquireLock(paths.lock, id)
    try {
      const names = await readdir(this.dir)
      const backups = names.filter((n) => n.startsWith(`${id}.jsonl.v`) && n.endsWith('.bak')).map((n) => join(this.dir, n))
      await unlink(paths.file)
      for (const file of [paths.meta, ...backups]) await unlink(file).catch(() => undefined)
      await syncPath(this.dir).catch(() => undefined)
    } finally {
      await release()
    }
  }

  /** Flushes and closes every sink this store handed out (plugin disposal). */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.sinks].map((sink) => sink.close()))
  }

  private async info(id: string): Promise<SessionInfo | undefined> {
    const paths = sessionPaths(this.dir, id)
    try {
      const info = await readSessionInfo(paths.file, id, () => this.read(id))
      const meta = await readMeta(paths.meta)
      if (meta.title !== undefined) info.title = meta.title
      return info
    } catch (error) {
      this.logger.warn('skipping %s in the session list: %s', paths.file, (error as Error).message)
      return undefined
    }
  }

  private track(id: string, handle: FileHandle, size: number, metaPath: string, release: () => Promise<void>): JsonlSink {
    const sink: JsonlSink = new JsonlSink({
      id, handle, size, metaPath,
      release: async () => {
        this.sinks.delete(sink)
        await release()
      },
      onWarning: (message) => this.logger.warn(message),
    })
    this.sinks.add(sink)
    return sink
  }

  private async mustExist(id: string, file: string): Promise<void> {
    try {
      await stat(file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new DshError('SESSION_NOT_FOUND', `no session ${id} in ${this.dir}`, { hint: 'run `dsh sessions` to list the stored sessions (`--json` for scripts)' })
      }
      throw error
    }
  }

  /** Keeps the original as `backup` (an existing backup is kept), then replaces `file` atomically. */
  private async rewrite(file: string, backup: string, header: SessionHeader, events: readonly SessionEvent[]): Promise<string> {
    try {
      await copyFile(file, backup, constants.COPYFILE_EXCL)
      await syncPath(backup)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`
    const handle = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600)
    try {
      let text = serializeHeader(header)
      for (const event of events) text += serializeEvent(event)
      await appendAll(handle, Buffer.from(text))
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(tmp, file)
    await syncPath(this.dir)
    return backup
  }

  private async refreshMeta(path: string, events: readonly SessionEvent[]): Promise<void> {
    const title = latestTitle(events)
    const meta = await readMeta(path)
    if (title !== meta.title && title !== undefined) await writeMeta(path, { title })
  }
}

async function readMeta(path: string): Promise<SessionMeta> {
  try {
    const value = JSON.parse(await readFile(path, 'utf8')) as SessionMeta
    return typeof value.title === 'string' ? { title: value.title } : {}
  } catch {
    return {}
  }
}
