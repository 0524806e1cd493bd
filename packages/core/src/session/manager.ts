import { Service } from '@deepseek-ai/cordis'
import type { Context } from '@deepseek-ai/cordis'
import { CORE_EVENT_TYPES, DshError, SESSION_FORMAT_VERSION } from '@dsh/protocol'
import type { SessionEvent, SessionHeader } from '@dsh/protocol'
import { SessionErrorCode } from './errors.js'
import { assertSessionId, newSessionId } from './ids.js'
import { checkReadable, repairEvents } from './repair.js'
import { Session } from './session.js'
import type { SessionSink } from './session.js'
import type { LoadedSession, SessionInfo, SessionStore } from './store.js'

declare module '@deepseek-ai/cordis' {
  interface Context {
    sessions: SessionManager
  }
  interface Events {
    /** Every append on a managed session (including load repairs and notices), after it is in memory. Listener errors are logged. */
    'session/event'(session: Session, event: SessionEvent): void
    /** A session was created, opened or forked here (before its first turn). */
    'session/opened'(session: Session): void
    /** A managed session was closed (flushed, unlocked): what it owned may be released. */
    'session/closed'(session: Session): void
  }
}

export interface CreateSessionOptions {
  cwd: string
  parent?: SessionHeader['parent']
  /** Defaults to a new sortable id (`newSessionId()`). */
  id?: string
}

export interface ForkOptions {
  /** Last seq copied (inclusive); defaults to the whole log. */
  uptoSeq?: number
  /** Defaults to the source's cwd. */
  cwd?: string
}

/**
 * `ctx.sessions`: creates, opens (lock + load + check + repair), forks and lists sessions
 * over `ctx.sessionStore`. A session opened here stays in `get()` until closed; opening an
 * id that is already open in this manager returns the same `Session`.
 * Note: cordis hands callers a derived object (`Object.create(manager)`), so state lives
 * in containers created by the constructor and is never reassigned.
 */
export class SessionManager extends Service {
  private readonly store: SessionStore
  private readonly home: Context
  private readonly open_ = new Map<string, Session>()
  private readonly opening = new Map<string, Promise<Session>>()
  /** Plugin event types → number of registrations. */
  private readonly extraTypes = new Map<string, number>()

  constructor(ctx: Context) {
    super(ctx, 'sessions')
    this.home = ctx
    this.store = ctx.sessionStore
  }

  async create(opts: CreateSessionOptions): Promise<Session> {
    const id = opts.id ?? newSessionId()
    assertSessionId(id)
    const header: SessionHeader = { format: 'dsh-session', version: SESSION_FORMAT_VERSION, id, created: Date.now(), cwd: opts.cwd }
    if (opts.parent) header.parent = structuredClone(opts.parent)
    const sink = await this.store.create(header)
    return this.adopt(header, [], sink)
  }

  /**
   * Takes the writer lock, loads, refuses unreadable logs (UNSUPPORTED_EVENT), then appends
   * what a crash left open (`repairEvents`) and one `notice` per store notice (torn line,
   * migration), and flushes them before resolving.
   */
  async open(id: string): Promise<Session> {
    const existing = this.open_.get(id)
    if (existing && !existing.closed) return existing
    if (existing) await existing.close()
    let pending = this.opening.get(id)
    if (!pending) {
      pending = this.load(id).finally(() => this.opening.delete(id))
      this.opening.set(id, pending)
    }
    return pending
  }

  /** Loads without the lock (no repair, no readability check). */
  read(id: string): Promise<LoadedSession> {
    return this.store.read(id)
  }

  list(filter?: { cwd?: string }): Promise<SessionInfo[]> {
    return this.store.list(filter)
  }

  /** An open (not closed) session of this manager. */
  get(id: string): Session | undefined {
    const session = this.open_.get(id)
    return session && !session.closed ? session : undefined
  }

  /**
   * A new session holding a copy of events [0..uptoSeq] of `id` (seq renumbered from 0,
   * times kept), `header.parent = {id, fork: true}`, then repaired (a fork taken mid-turn
   * is closed like a crash). Reads the live log when `id` is open here, else the store.
   */
  async fork(id: string, opts: ForkOptions = {}): Promise<Session> {
    const { uptoSeq } = opts
    if (uptoSeq !== undefined && !(Number.isInteger(uptoSeq) && uptoSeq >= 0)) {
      throw new DshError(SessionErrorCode.INVALID_ARGUMENT, `fork: uptoSeq must be a non-negative integer, got ${uptoSeq}`)
    }
    const live = this.get(id)
    const source = live ? { header: live.header, events: live.events } : await this.store.read(id)
    checkReadable(source.events, this.knownTypes())
    const end = uptoSeq === undefined ? source.events.length : Math.min(uptoSeq + 1, source.events.length)
    const events: SessionEvent[] = []
    for (let i = 0; i < end; i++) {
      const event = source.events[i]!
      events.push(event.seq === i ? event : { ...event, seq: i })
    }
    const header: SessionHeader = {
      ...structuredClone(source.header),
      format: 'dsh-session', version: SESSION_FORMAT_VERSION, id: newSessionId(), created: Date.now(),
      cwd: opts.cwd ?? source.header.cwd, parent: { id, fork: true },
    }
    const sink = await this.store.create(header)
    let session: Session
    try {
      for (const event of events) sink.write(event)
      session = this.adopt(header, events, sink, 0)
    } catch (error) {
      await sink.close()
      throw error
    }
    for (const { type, data } of repairEvents(events)) session.append(type, data)
    await session.flush()
    return session
  }

  /**
   * Declares a plugin event type as readable (so logs holding it without `ignorable` open).
   * The registration is undone with the calling plugin (or by the returned disposer).
   */
  defineEventType(type: string): () => Promise<void> {
    return this.ctx.effect(() => {
      this.extraTypes.set(type, (this.extraTypes.get(type) ?? 0) + 1)
      return () => {
        const n = (this.extraTypes.get(type) ?? 1) - 1
        if (n > 0) this.extraTypes.set(type, n)
        else this.extraTypes.delete(type)
      }
    }, `sessions.defineEventType(${type})`)
  }

  /** The core vocabulary plus every registered plugin type. */
  knownTypes(): ReadonlySet<string> {
    return new Set([...CORE_EVENT_TYPES, ...this.extraTypes.keys()])
  }

  /** Closes every open session (flush + unlock); used when the plugin is disposed. */
  async closeAll(): Promise<void> {
    const results = await Promise.allSettled([...this.open_.values()].map((session) => session.close()))
    for (const result of results) {
      if (result.status === 'rejected') this.home.logger('sessions').warn('closing a session failed: %s', result.reason)
    }
  }

  private async load(id: string): Promise<Session> {
    const { header, events, sink, notices } = await this.store.open(id)
    let session: Session
    try {
      checkReadable(events, this.knownTypes())
      session = this.adopt(header, events, sink)
    } catch (error) {
      await sink.close()
      throw error
    }
    for (const { type, data } of repairEvents(session.events)) session.append(type, data)
    for (const message of notices ?? []) session.append('notice', { level: 'warn', message, source: 'persistence' })
    await session.flush()
    return session
  }

  private adopt(header: SessionHeader, events: SessionEvent[], sink: SessionSink, durableCount = events.length): Session {
    const managed: SessionSink = {
      write: (event) => sink.write(event),
      flush: () => sink.flush(),
      close: async () => {
        try {
          await sink.close()
        } finally {
          if (this.open_.get(header.id) === session) this.open_.delete(header.id)
          this.notify('session/closed', session)
        }
      },
    }
    // A throwing listener is logged, never surfaced to the appender: the event is already logged.
    const emit = (event: SessionEvent) => {
      try {
        this.home.emit('session/event', session, event)
      } catch (error) {
        this.home.logger('sessions').warn('a session/event listener failed: %s', error)
      }
    }
    const session: Session = new Session(header, events, managed, emit, durableCount)
    this.open_.set(header.id, session)
    this.notify('session/opened', session)
    return session
  }

  private notify(name: 'session/opened' | 'session/closed', session: Session): void {
    try {
      this.home.emit(name, session)
    } catch (error) {
      this.home.logger('sessions').warn('a %s listener failed: %s', name, error)
    }
  }
}
