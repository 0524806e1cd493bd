import type { Agent, Session, ToolDefinition } from '@dsh/core'
import { DshError, type ErrorInfo, type SessionEvent, type UserContent } from '@dsh/protocol'
import type { ClientRequestName } from '@dsh/host-api'
import type { ClientRequestParams, ClientRequestResult } from './types.js'
import { LazyViews, type EventView } from './views.js'
import type { Conn } from './connection.js'

export type Status = 'idle' | 'running' | 'waiting'

/** A server→client request waiting for its answer (by the owner's `request`, or `session/respond`). */
interface Pending {
  method: ClientRequestName
  owner: Conn
  resolve(result: unknown): void
  reject(error: unknown): void
}

interface QueuedPrompt { id: string; content: UserContent[]; epoch: number }

/** A subscriber's cursor: the next seq it is owed; `ready` once its replay has been sent. */
interface Cursor { next: number; ready: boolean }

/**
 * One session held open by the host: its agent, owner, subscribers, the prompt queue
 * (one prompt per turn, FIFO, cancel epochs), pending client requests and status. Every
 * client-visible event goes through the durable watcher (`watchDurable`), in seq order,
 * each once per subscriber; views are computed once per event, in seq order, when first
 * needed (a resumed session of 100,000 events costs nothing until a client reads its history).
 */
export class Hosted {
  readonly id: string
  owner: Conn | undefined
  readonly subscribers = new Map<Conn, Cursor>()
  readonly pending = new Map<string, Pending>()
  /** Client-defined tools of this session: they bypass the agent preset's filter (`question` does not). */
  readonly ownTools = new Set<string>()
  readonly disposers: (() => void | Promise<void>)[] = []
  private readonly views: LazyViews
  private readonly queue: QueuedPrompt[] = []
  private epoch = 0
  private draining = false
  /** Commands and command-started turns in flight. */
  private busyCount = 0
  private lastStatus: Status = 'idle'
  /** Set when the session's log could not be written: reported with the status, and no prompt runs after it. */
  failure: ErrorInfo | undefined
  private readonly unwatch: () => void
  private counter = 0

  constructor(readonly session: Session, readonly agent: Agent, tool: (name: string) => ToolDefinition | undefined,
    private readonly onStatus: (hosted: Hosted, status: Status) => void) {
    this.id = session.id
    this.views = new LazyViews(() => session.events, tool)
    this.unwatch = session.watchDurable((batch) => this.deliver(batch))
  }

  get status(): Status {
    if (this.pending.size) return 'waiting'
    return this.draining || this.busyCount > 0 ? 'running' : 'idle'
  }

  /** The durable events, [0, durableCount). */
  durableEvents(): readonly SessionEvent[] {
    return this.session.events.slice(0, this.session.durableCount)
  }

  /** Subscribes `conn` from `afterSeq`: the replay is sent on the next macrotask (after the caller's reply), then live events. */
  subscribe(conn: Conn, afterSeq: number): void {
    const cursor: Cursor = { next: Math.max(0, afterSeq + 1), ready: false }
    this.subscribers.set(conn, cursor)
    setImmediate(() => {
      if (this.subscribers.get(conn) !== cursor) return
      const end = this.session.durableCount
      for (let seq = cursor.next; seq < end; seq++) this.send(conn, seq)
      cursor.next = Math.max(cursor.next, end)
      cursor.ready = true
    })
  }

  unsubscribe(conn: Conn): void {
    this.subscribers.delete(conn)
  }

  newId(prefix: string): string {
    return `${prefix}-${Date.now().toString(36)}-${++this.counter}`
  }

  /** `queue` a prompt (its own turn, after every earlier one) or `steer` it into the running turn. */
  prompt(content: UserContent[], mode: 'queue' | 'steer'): { promptId: string; mode: 'queue' | 'steer'; queued: boolean } {
    if (this.failure) throw new DshError(this.failure.code, `session ${this.id} can no longer be written: ${this.failure.message}`, { hint: 'free disk space (or fix the cause), then reopen the session' })
    const promptId = this.newId('p')
    if (mode === 'steer') {
      if (this.status === 'idle') throw new DshError('STEER_NO_TURN', `session ${this.id} has no running turn to steer`, { hint: 'send it with mode "queue"' })
      this.agent.steer(content, promptId)
      return { promptId, mode, queued: false }
    }
    const queued = this.status !== 'idle'
    this.queue.push({ id: promptId, content, epoch: this.epoch })
    this.drain()
    return { promptId, mode, queued }
  }

  /** Aborts the running turn and drops every prompt queued before this call. */
  cancel(): boolean {
    const running = this.status !== 'idle'
    this.epoch++
    const dropped = this.queue.splice(0)
    for (const p of dropped) this.dropNotice(p)
    this.agent.cancel()
    for (const pending of [...this.pending.values()]) pending.reject(new DshError('CANCELLED', 'the turn was cancelled'))
    return running || dropped.length > 0
  }

  /** Runs `work` (a command, and the turn it starts) as part of the session's activity. */
  async busy<T>(work: () => Promise<T>): Promise<T> {
    this.busyCount++
    this.refresh()
    try {
      return await work()
    } finally {
      this.busyCount--
      this.refresh()
    }
  }

  /** Puts a request to the owner and waits for its answer; `signal` (the turn's) withdraws it. */
  ask<M extends ClientRequestName>(method: M, params: ClientRequestParams<M>, signal: AbortSignal): Promise<ClientRequestResult<M>> {
    const owner = this.owner
    if (!owner || owner.closed) return Promise.reject(new DshError('NO_OWNER', `session ${this.id} has no connected owner to answer ${method}`))
    const requestId = (params as { requestId: string }).requestId
    const controller = new AbortController()
    return new Promise<ClientRequestResult<M>>((resolve, reject) => {
      const finish = () => {
        this.pending.delete(requestId)
        signal.removeEventListener('abort', onAbort)
        controller.abort()
        this.refresh()
      }
      const onAbort = () => entry.reject(new DshError('CANCELLED', `${method} ${requestId} was withdrawn: the turn was cancelled`))
      const entry: Pending = {
        method, owner,
        resolve: (result) => { finish(); resolve(result as ClientRequestResult<M>) },
        reject: (error) => { finish(); reject(error) },
      }
      if (signal.aborted) return reject(new DshError('CANCELLED', `${method} was cancelled before it was sent`))
      this.pending.set(requestId, entry)
      signal.addEventListener('abort', onAbort, { once: true })
      this.refresh()
      owner.client.request(method, params, controller.signal).then((r) => this.pending.get(requestId) === entry && entry.resolve(r),
        (e: unknown) => this.pending.get(requestId) === entry && entry.reject(e))
    })
  }

  /** Answers a pending request from `conn` (`session/respond`). */
  respond(conn: Conn, requestId: string, result: unknown): void {
    const pending = this.pending.get(requestId)
    if (!pending) throw new DshError('REQUEST_NOT_PENDING', `request ${requestId} of session ${this.id} is not pending (answered, withdrawn or unknown)`)
    if (pending.owner !== conn) throw new DshError('NOT_OWNER', `session ${this.id} is owned by another client; only its owner answers its requests`)
    pending.resolve(result)
  }

  /** Withdraws every pending request of `owner` (it went away): each is rejected. */
  abandon(owner: Conn): void {
    for (const pending of [...this.pending.values()]) {
      if (pending.owner === owner) pending.reject(new DshError('CLIENT_GONE', `the client "${owner.client.name}" went away before answering`))
    }
  }

  /** Stops watching; the caller closes the session. */
  detach(): void {
    this.unwatch()
    this.subscribers.clear()
    this.queue.splice(0)
  }

  refresh(): void {
    const status = this.status
    if (status === this.lastStatus) return
    this.lastStatus = status
    this.onStatus(this, status)
  }

  private drain(): void {
    if (this.draining) return
    this.draining = true
    this.refresh()
    void (async () => {
      try {
        while (this.queue.length) {
          await this.agent.idle()
          const next = this.queue.shift()
          if (!next) break
          if (next.epoch !== this.epoch || this.session.closed) {
            this.dropNotice(next)
            continue
          }
          const outcome = await this.agent.followup(next.content, 'prompt', next.id)
          if (outcome.error?.code === 'SESSION_WRITE_FAILED') {
            // the log is broken: nothing more can be recorded, so nothing more may run
            this.failure = outcome.error
            this.queue.length = 0
            break
          }
        }
      } finally {
        this.draining = false
        this.refresh()
      }
    })()
  }

  private dropNotice(prompt: QueuedPrompt): void {
    if (this.session.closed) return
    this.session.append('notice', { level: 'info', message: `prompt ${prompt.id} was dropped: a cancel came before its turn`, source: 'host' })
  }

  /** The view of event `seq`, computed when first asked for (see LazyViews). */
  viewAt(seq: number): EventView {
    return this.views.at(seq)
  }

  private deliver(batch: readonly SessionEvent[]): void {
    for (const [conn, cursor] of this.subscribers) {
      if (!cursor.ready) continue
      for (const event of batch) {
        if (event.seq < cursor.next) continue
        this.send(conn, event.seq)
        cursor.next = event.seq + 1
      }
    }
  }

  private send(conn: Conn, seq: number): void {
    const event = this.session.events[seq]!
    conn.notify('session/event', { sessionId: this.id, event: event as never, view: this.viewAt(seq) as never })
  }
}
