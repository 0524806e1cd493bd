import { open, rename, writeFile } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { DshError, failpoint } from '@dsh/protocol'
import type { SessionEvent } from '@dsh/protocol'
import type { SessionSink } from '@dsh/core'
import { serializeEvent } from './format.js'
import { writeFailed } from './write-error.js'

/** Writes all of `data` at the end of the file (O_APPEND): one `write` unless the kernel writes short. */
export async function appendAll(handle: FileHandle, data: Buffer): Promise<void> {
  let offset = 0
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset, null)
    offset += bytesWritten
  }
}

/** fsync a file, or a directory so that a file created (or renamed) in it survives a power cut. */
export async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

export interface JsonlSinkOptions {
  id: string
  handle: FileHandle
  /** The file's length: the end of its last whole record. */
  size: number
  /** `<id>.meta.json`: rewritten (temp + rename, not fsynced: it is a cache) when a flush carries a `session/title`. */
  metaPath: string
  release: () => Promise<void>
  onWarning: (message: string) => void
}

/**
 * The JSONL sink of one session. `write` serializes and buffers one line; `flush` issues one
 * append-only write for the whole batch and fsyncs the file; flushes run one at a time, in
 * call order, so a resolved flush covers every write made before it was called. A failed
 * write or fsync (ENOSPC, EIO) truncates the file back to the end of its last whole record,
 * fsyncs it and breaks the sink: that flush and every later write and flush throw the same
 * SESSION_WRITE_FAILED (no retry after a failed fsync). `close` flushes, closes the file
 * and releases the lock; it is idempotent.
 */
export class JsonlSink implements SessionSink {
  private readonly pending: string[] = []
  private readonly state: { chain: Promise<void>; title?: string; failure?: DshError; closing?: Promise<void> } = { chain: Promise.resolve() }
  private size: number

  constructor(private readonly options: JsonlSinkOptions) {
    this.size = options.size
  }

  write(event: SessionEvent): void {
    if (this.state.closing) throw new DshError('SESSION_CLOSED', `session ${this.options.id}: the sink is closed`)
    if (this.state.failure) throw this.state.failure
    this.pending.push(serializeEvent(event))
    if (event.type === 'session/title') {
      const title = (event.data as { title?: unknown } | null)?.title
      if (typeof title === 'string') this.state.title = title
    }
  }

  flush(): Promise<void> {
    const run = this.state.chain.then(() => this.drain())
    this.state.chain = run.catch(() => undefined)
    return run
  }

  /** A write failure already thrown to a flush is not thrown again here (it was reported once). */
  close(): Promise<void> {
    this.state.closing ??= (async () => {
      const reported = this.state.failure
      try {
        await this.flush().catch((error: unknown) => { if (error !== reported) throw error })
      } finally {
        await this.options.handle.close().catch(() => undefined)
        await this.options.release()
      }
    })()
    return this.state.closing
  }

  private async drain(): Promise<void> {
    if (this.state.failure) throw this.state.failure
    if (this.pending.length === 0) return
    const batch = Buffer.from(this.pending.join(''), 'utf8')
    this.pending.length = 0
    const title = this.state.title
    delete this.state.title
    let written = false
    try {
      failpoint('sink.flush.start')
      await appendAll(this.options.handle, batch)
      written = true
      failpoint('sink.flush.written')
      await this.options.handle.sync()
      this.size += batch.length
      failpoint('sink.flush.synced')
    } catch (cause) {
      // Back to the last record boundary: no torn line for the next load to drop. After a
      // failed write the truncation is made durable; after a failed fsync nothing is fsynced
      // again (the kernel may have dropped the dirty pages: a second fsync proves nothing).
      const truncate = this.options.handle.truncate(this.size)
      await (written ? truncate : truncate.then(() => this.options.handle.sync())).catch(() => undefined)
      this.state.failure = writeFailed(this.options.id, written ? 'making the log durable (fsync)' : 'writing the log', cause)
      throw this.state.failure
    }
    if (title !== undefined) await writeMeta(this.options.metaPath, { title }).catch((error: Error) => this.options.onWarning(`could not update ${this.options.metaPath}: ${error.message}`))
  }
}

/** The sidecar `<id>.meta.json`: `{title}` for `list()`; a cache, rebuilt from the log when a session is opened. */
export interface SessionMeta { title?: string }

export async function writeMeta(path: string, meta: SessionMeta): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`
  await writeFile(tmp, JSON.stringify(meta))
  await rename(tmp, path)
}
