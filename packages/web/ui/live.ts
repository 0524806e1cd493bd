/**
 * Event streams with an honest connection state. The browser's own EventSource retry
 * resends `Last-Event-ID` (the last `id: <seq>` it saw), so a dropped stream resumes
 * exactly; when the server refuses the stream (restart with a cursor it no longer knows,
 * deleted session) the stream is reopened by hand with `after=<seq>` and backoff.
 */
import { withToken } from './auth.js'

export type ConnState = 'connected' | 'reconnecting' | 'offline'

type Handlers = Record<string, (data: any) => void>

const streams = new Set<LiveStream>()
const stateListeners = new Set<(s: ConnState) => void>()
let current: ConnState = 'connected'

function recompute(): void {
  let next: ConnState = 'connected'
  for (const s of streams) {
    if (s.state === 'offline') next = 'offline'
    else if (s.state === 'reconnecting' && next === 'connected') next = 'reconnecting'
  }
  if (next === current) return
  current = next
  for (const fn of stateListeners) fn(next)
}

export function connState(): ConnState {
  return current
}

export function onConnState(fn: (s: ConnState) => void): () => void {
  stateListeners.add(fn)
  return () => stateListeners.delete(fn)
}

export class LiveStream {
  state: ConnState = 'reconnecting'
  private es: EventSource | null = null
  private failures = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private watchdog: ReturnType<typeof setTimeout> | undefined
  private stopped = false

  /** `url(afterSeq?)`: the stream's URL; `cursor()` gives the seq to resume after on a manual reopen. */
  constructor(private readonly url: (after: number | null) => string, private readonly handlers: Handlers, private readonly cursor: () => number | null = () => null,
    private readonly onRefused?: () => void) {
    streams.add(this)
    this.open(null)
  }

  private set(state: ConnState): void {
    this.state = state
    recompute()
  }

  private open(after: number | null): void {
    if (this.stopped) return
    const es = new EventSource(withToken(this.url(after)))
    this.es = es
    es.onopen = () => {
      this.failures = 0
      this.set('connected')
      this.feed()
    }
    es.onerror = () => {
      if (this.stopped || this.es !== es) return
      this.failures++
      this.set(this.failures >= 3 ? 'offline' : 'reconnecting')
      if (es.readyState === EventSource.CLOSED) {
        es.close()
        this.es = null
        this.onRefused?.()
        const delay = Math.min(500 * 2 ** Math.min(this.failures, 5), 10_000)
        this.timer = setTimeout(() => this.open(this.cursor()), delay)
      }
    }
    for (const [name, fn] of Object.entries(this.handlers)) {
      es.addEventListener(name, (e) => {
        this.feed()
        const data = (e as MessageEvent<string | undefined>).data
        if (typeof data === 'string') fn(JSON.parse(data))
      })
    }
    es.addEventListener('heartbeat', () => this.feed())
  }

  /** Heartbeats come every 15 s; 40 s of silence means the connection is dead. */
  private feed(): void {
    clearTimeout(this.watchdog)
    this.watchdog = setTimeout(() => {
      if (this.stopped) return
      this.es?.close()
      this.es = null
      this.set('reconnecting')
      this.open(this.cursor())
    }, 40_000)
  }

  close(): void {
    this.stopped = true
    clearTimeout(this.timer)
    clearTimeout(this.watchdog)
    this.es?.close()
    streams.delete(this)
    recompute()
  }
}
