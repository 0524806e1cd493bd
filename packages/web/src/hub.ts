import type { ClientRequestName, NotificationName } from '@dsh/host-api'
import { CLIENT_REQUESTS } from '@dsh/host-api'
import type { ClientRequestParams, ClientRequestResult, HostClient, NotificationParams } from '@dsh/host'
import { DshError } from '@dsh/protocol'
import type { SseStream } from './sse.js'

interface Pending {
  sessionId: string
  requestId: string
  method: ClientRequestName
  params: unknown
  resolve(result: unknown): void
  reject(error: unknown): void
}

/** A session stream: frames are held back until its history replay has been sent. */
export interface SessionListener {
  sessionId: string
  stream: SseStream
  /** Highest seq sent; live events at or below it are duplicates and dropped. */
  lastSent: number
  /** Live frames that arrived during the replay (null once live). */
  held: { event: string; data: unknown; seq?: number }[] | null
}

/**
 * The web surface's one HostClient: every tab shares it, so a session stays owned (and
 * its turn keeps running) across reloads and tabs. Notifications fan out to the SSE
 * streams watching a session; server→client requests wait here until some tab answers
 * (`session/respond`) and are replayed to every stream that opens meanwhile.
 */
export class WebHub implements HostClient {
  readonly name = 'web'
  readonly capabilities = { approvals: true, questions: true, tools: false }
  readonly sessions = new Set<SessionListener>()
  readonly hostStreams = new Set<SseStream>()
  private readonly pending = new Map<string, Pending>()

  notify<N extends NotificationName>(method: N, params: NotificationParams<N>): void {
    const p = params as { sessionId: string; event?: { seq: number } }
    if (method === 'session/event') this.toSession(p.sessionId, 'event', params, p.event!.seq)
    else if (method === 'session/output') this.toSession(p.sessionId, 'output', params)
    else if (method === 'session/status') {
      this.toSession(p.sessionId, 'status', params)
      this.toHost('status', params)
    }
  }

  request<M extends ClientRequestName>(method: M, params: ClientRequestParams<M>, signal: AbortSignal): Promise<ClientRequestResult<M>> {
    const { sessionId, requestId } = params as { sessionId: string; requestId: string }
    return new Promise((resolve, reject) => {
      const entry: Pending = { sessionId, requestId, method, params, resolve: resolve as (r: unknown) => void, reject }
      const done = () => {
        if (this.pending.get(requestId) !== entry) return
        this.pending.delete(requestId)
        this.toSession(sessionId, 'request-done', { sessionId, requestId })
        this.toHost('request-done', { sessionId, requestId })
      }
      entry.resolve = (r) => { done(); resolve(r as ClientRequestResult<M>) }
      entry.reject = (e) => { done(); reject(e) }
      if (signal.aborted) return reject(new DshError('REQUEST_CANCELLED', 'the request is no longer pending'))
      signal.addEventListener('abort', () => entry.reject(new DshError('REQUEST_CANCELLED', 'the request is no longer pending')), { once: true })
      this.pending.set(requestId, entry)
      this.toSession(sessionId, 'request', { method, params })
      this.toHost('request', { method, params: { sessionId, requestId } })
    })
  }

  /** `session/respond`: validates the answer against the request's result schema. */
  respond(sessionId: string, requestId: string, result: unknown): void {
    const entry = this.pending.get(requestId)
    if (!entry || entry.sessionId !== sessionId) {
      throw new DshError('REQUEST_NOT_PENDING', `request ${JSON.stringify(requestId.slice(0, 80))} of session ${JSON.stringify(sessionId.slice(0, 80))} is not pending (answered elsewhere, cancelled, or never asked)`)
    }
    const parsed = CLIENT_REQUESTS[entry.method].result.safeParse(result)
    if (!parsed.success) {
      throw new DshError('INVALID_PARAMS', `the answer to ${entry.method} is invalid`, { data: { issues: parsed.error.issues.map((i) => ({ path: ['params', 'result', ...i.path.map(String)].join('.'), message: i.message })) } })
    }
    entry.resolve(parsed.data)
  }

  /** The requests still waiting in one session (or all), for a stream that just opened. */
  pendingOf(sessionId?: string): { method: ClientRequestName; params: unknown }[] {
    return [...this.pending.values()].filter((p) => sessionId === undefined || p.sessionId === sessionId).map((p) => ({ method: p.method, params: p.params }))
  }

  /** Frames to every stream of one session (live ones at once, replaying ones after their replay). */
  toSession(sessionId: string, event: string, data: unknown, seq?: number): void {
    for (const l of this.sessions) {
      if (l.sessionId !== sessionId) continue
      if (l.held) l.held.push({ event, data, ...(seq === undefined ? {} : { seq }) })
      else sendTo(l, event, data, seq)
    }
  }

  toHost(event: string, data: unknown): void {
    for (const s of this.hostStreams) s.send(event, data)
  }

  /** Ends a replay: flushes what arrived meanwhile, dropping what the replay already sent. */
  goLive(l: SessionListener): void {
    const held = l.held ?? []
    l.held = null
    for (const f of held) sendTo(l, f.event, f.data, f.seq)
  }

  /** Every pending request is refused (the gateway is shutting down). */
  rejectAll(): void {
    for (const p of [...this.pending.values()]) p.reject(new DshError('REQUEST_CANCELLED', 'dsh web is shutting down'))
  }
}

function sendTo(l: SessionListener, event: string, data: unknown, seq?: number): void {
  if (seq !== undefined) {
    if (seq <= l.lastSent) return
    l.lastSent = seq
  }
  l.stream.send(event, data, seq)
}
