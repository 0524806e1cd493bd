import { DshError, failpoint, findNonJson } from '@dsh/protocol'
import type { Json, ModelMessage, SessionEvent, SessionEventMap, SessionEventType, SessionHeader } from '@dsh/protocol'
import { MessageDeriver } from './derive.js'
import { SessionErrorCode } from './errors.js'

/**
 * Where appended events go. `write` buffers (never blocks, may throw when the sink is
 * broken or closed); `flush` resolves once every event written before the call is
 * durable; `close` flushes and releases the writer lock (idempotent).
 */
export interface SessionSink {
  write(event: SessionEvent): void
  flush(): Promise<void>
  close(): Promise<void>
}

export interface AppendOptions { ignorable?: boolean }

/** Receives events once they are durable (see `Session.watchDurable`). */
export type DurableListener = (events: readonly SessionEvent[]) => void

/**
 * One open session: an append-only, in-memory list of frozen events mirrored to a sink.
 * Invariants: `events[i].seq === i`; every event and its data are deeply frozen plain
 * JSON (data is copied through JSON on append, so memory holds exactly what a reload
 * would read back); `deriveMessages()` is maintained incrementally.
 */
export class Session {
  readonly id: string
  readonly header: SessionHeader
  private readonly log: SessionEvent[]
  private readonly sink: SessionSink
  private readonly onAppend: ((event: SessionEvent) => void) | undefined
  private readonly deriver = new MessageDeriver()
  private readonly latest = new Map<string, number>()
  private state: { closed: boolean; closing?: Promise<void> } = { closed: false }
  /** Events [0, count) are known durable; `scheduled` while an automatic flush is queued. */
  private readonly durable: { count: number; scheduled: boolean; watchers: Set<DurableListener> }

  /**
   * `events` is taken over (not copied) and frozen in place; it must satisfy
   * `events[i].seq === i` (else SESSION_CORRUPT). `durableCount` says how many of them are
   * already on disk (all, for a loaded log; 0 for one whose sink has not flushed them yet).
   */
  constructor(header: SessionHeader, events: SessionEvent[], sink: SessionSink, onAppend?: (event: SessionEvent) => void, durableCount = events.length) {
    this.header = freezeDeep(header)
    this.id = header.id
    this.log = events
    this.sink = sink
    this.onAppend = onAppend
    this.durable = { count: durableCount, scheduled: false, watchers: new Set() }
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!
      if (event.seq !== i) {
        throw new DshError(SessionErrorCode.SESSION_CORRUPT, `session ${this.id}: event ${i} has seq ${event.seq}`)
      }
      freezeDeep(event)
      this.latest.set(event.type, i)
      this.deriver.push(event)
    }
  }

  /** The workspace: the header's, or the process's cwd for a log that never recorded one (migrated v0). */
  get cwd(): string { return this.header.cwd || process.cwd() }
  get events(): readonly SessionEvent[] { return this.log }
  get closed(): boolean { return this.state.closed }
  /** How many events (from seq 0) are known to be fsynced: what a client may be shown. */
  get durableCount(): number { return this.durable.count }

  /**
   * "Shown means durable": `listener` receives, in seq order and exactly once each, the
   * events that became durable after this call (a batch per flush). While at least one
   * watcher exists, every append schedules a flush, coalesced per macrotask, so a watcher
   * sees each event promptly at the cost of one fsync per batch. A failed flush delivers
   * nothing (the appender's own flush reports the error). Returns the unsubscribe.
   */
  watchDurable(listener: DurableListener): () => void {
    this.durable.watchers.add(listener)
    if (this.durable.count < this.log.length) this.scheduleFlush()
    return () => { this.durable.watchers.delete(listener) }
  }

  /**
   * Validates `data` (plain JSON only: INVALID_EVENT names the path and the type),
   * assigns seq and time, freezes, appends, writes to the sink (buffered; call
   * `flush()` for durability) and calls `onAppend`. Throws SESSION_CLOSED after close().
   */
  append<T extends SessionEventType>(type: T, data: SessionEventMap[T], opts?: AppendOptions): SessionEvent<T>
  append(type: string, data: Json, opts?: AppendOptions): SessionEvent
  append(type: string, data: unknown, opts?: AppendOptions): SessionEvent {
    if (this.state.closed) {
      throw new DshError(SessionErrorCode.SESSION_CLOSED, `session ${this.id} is closed; cannot append "${type}"`)
    }
    if (typeof type !== 'string' || type.length === 0) {
      throw new DshError(SessionErrorCode.INVALID_EVENT, `event type must be a non-empty string, got ${JSON.stringify(type)}`)
    }
    const bad = findNonJson(data, '$.data')
    if (bad) {
      throw new DshError(SessionErrorCode.INVALID_EVENT, `event "${type}" is not plain JSON: ${bad}`, { data: { type, reason: bad } })
    }
    const event: SessionEvent = { type, seq: this.log.length, time: Date.now(), data: JSON.parse(JSON.stringify(data)) as Json }
    if (opts?.ignorable) event.ignorable = true
    freezeDeep(event)
    this.sink.write(event)
    this.log.push(event)
    this.latest.set(type, event.seq)
    this.deriver.push(event)
    failpoint('session.append.buffered')
    this.onAppend?.(event)
    if (this.durable.watchers.size) this.scheduleFlush()
    failpoint('session.append.notified')
    return event
  }

  /** The model history of this log (incremental: cheap to call every step; a fresh array each call). */
  deriveMessages(): ModelMessage[] {
    return this.deriver.messages
  }

  /** The latest event of `type`, if any (O(1)). */
  last<T extends string>(type: T): SessionEvent<T> | undefined {
    const index = this.latest.get(type)
    return index === undefined ? undefined : this.log[index] as SessionEvent<T>
  }

  /** Resolves once everything appended so far is durable. */
  async flush(): Promise<void> {
    if (this.state.closed) return this.state.closing
    const upto = this.log.length
    await this.sink.flush()
    this.markDurable(upto)
  }

  /** Flushes and releases the writer lock; later appends throw SESSION_CLOSED. Idempotent. */
  close(): Promise<void> {
    if (!this.state.closed) {
      this.state.closed = true
      const upto = this.log.length
      this.state.closing = this.sink.close().then(() => this.markDurable(upto))
    }
    return this.state.closing!
  }

  private scheduleFlush(): void {
    if (this.durable.scheduled || this.state.closed) return
    this.durable.scheduled = true
    setImmediate(() => {
      this.durable.scheduled = false
      if (!this.state.closed) this.flush().catch(() => undefined)
    })
  }

  private markDurable(upto: number): void {
    const from = this.durable.count
    if (upto <= from) return
    this.durable.count = upto
    if (!this.durable.watchers.size) return
    const batch = this.log.slice(from, upto)
    for (const watcher of [...this.durable.watchers]) {
      try {
        watcher(batch)
      } catch {
        // a watcher's failure is its own; the events are durable regardless
      }
    }
  }
}

/** Freezes a JSON value and everything inside it; stops at already-frozen objects. */
function freezeDeep<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value
  Object.freeze(value)
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) freezeDeep(value[i])
  } else {
    for (const key in value) freezeDeep((value as Record<string, unknown>)[key])
  }
  return value
}
