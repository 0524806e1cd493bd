import { Service } from '@deepseek-ai/cordis'
import type { Context } from '@deepseek-ai/cordis'
import { DshError } from '@dsh/protocol'
import type { SessionEvent, SessionHeader } from '@dsh/protocol'
import { SessionErrorCode } from './errors.js'
import { assertSessionId } from './ids.js'
import type { SessionSink } from './session.js'
import type { LoadedSession, SessionInfo, SessionStore } from './store.js'

interface Stored {
  header: SessionHeader
  /** Flushed ("durable") events only: what a crashed process would leave. */
  events: SessionEvent[]
  updatedAt: number
  locked: boolean
}

/**
 * `ctx.sessionStore` in memory, for tests and ephemeral runs. Same contract as the JSONL
 * store: only flushed events survive a sink that is dropped without `close()`, one
 * writer per session (SESSION_LOCKED), ids validated. Nothing outlives the process.
 */
export class MemorySessionStore extends Service implements SessionStore {
  private readonly stored = new Map<string, Stored>()

  constructor(ctx: Context) {
    super(ctx, 'sessionStore')
  }

  async create(header: SessionHeader): Promise<SessionSink> {
    assertSessionId(header.id)
    if (this.stored.has(header.id)) {
      throw new DshError(SessionErrorCode.SESSION_EXISTS, `session ${header.id} already exists`)
    }
    const entry: Stored = { header: structuredClone(header), events: [], updatedAt: Date.now(), locked: true }
    this.stored.set(header.id, entry)
    return memorySink(entry)
  }

  async open(id: string): Promise<LoadedSession & { sink: SessionSink }> {
    const entry = this.entry(id)
    if (entry.locked) {
      throw new DshError(SessionErrorCode.SESSION_LOCKED, `session ${id} is already open for writing (pid ${process.pid}, in memory)`, {
        hint: 'close the other handle first',
      })
    }
    entry.locked = true
    return { header: structuredClone(entry.header), events: entry.events.slice(), sink: memorySink(entry) }
  }

  async read(id: string): Promise<LoadedSession> {
    const entry = this.entry(id)
    return { header: structuredClone(entry.header), events: entry.events.slice() }
  }

  async list(filter?: { cwd?: string }): Promise<SessionInfo[]> {
    const out: SessionInfo[] = []
    for (const { header, events, updatedAt } of this.stored.values()) {
      if (filter?.cwd !== undefined && header.cwd !== filter.cwd) continue
      const info: SessionInfo = { id: header.id, cwd: header.cwd, created: header.created, updatedAt, events: events.length }
      if (header.parent) info.parent = structuredClone(header.parent)
      const title = latestTitle(events)
      if (title !== undefined) info.title = title
      out.push(info)
    }
    return out.sort((a, b) => b.updatedAt - a.updatedAt)
  }

  async isLocked(id: string): Promise<boolean> {
    return this.stored.get(id)?.locked ?? false
  }

  async delete(id: string): Promise<void> {
    if (this.entry(id).locked) throw new DshError(SessionErrorCode.SESSION_LOCKED, `session ${id} is open for writing; close it first`)
    this.stored.delete(id)
  }

  private entry(id: string): Stored {
    assertSessionId(id)
    const entry = this.stored.get(id)
    if (!entry) throw new DshError(SessionErrorCode.SESSION_NOT_FOUND, `no session ${id} (in memory)`)
    return entry
  }
}

function memorySink(entry: Stored): SessionSink {
  const pending: SessionEvent[] = []
  const state = { closed: false }
  const flush = async () => {
    if (pending.length === 0) return
    entry.events.push(...pending.splice(0))
    entry.updatedAt = Date.now()
  }
  return {
    write(event) {
      if (state.closed) throw new DshError(SessionErrorCode.SESSION_CLOSED, `session ${entry.header.id}: sink is closed`)
      pending.push(event)
    },
    flush,
    async close() {
      if (state.closed) return
      await flush()
      state.closed = true
      entry.locked = false
    },
  }
}

/** `data.title` of the latest `session/title` event (a plugin event: `{title: string}`). */
export function latestTitle(events: readonly SessionEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!
    if (event.type !== 'session/title') continue
    const title = (event.data as { title?: unknown } | null)?.title
    if (typeof title === 'string') return title
  }
  return undefined
}
