import { abortError } from './errors.js'
import type { CallOptions } from './peer.js'
import type {
  ApprovalHandler, ClientTool, ParamsOf, QuestionHandler, ResultOf, RunOptions, RunResult, SdkMethod, SessionEvent, SessionUpdate, Usage,
} from './types.js'

export type SessionDetail = ResultOf<'session/get'>['session']

/** What a Session needs of its client. */
export interface SessionLink {
  call<M extends SdkMethod>(method: M, params: ParamsOf<M>, options?: CallOptions): Promise<ResultOf<M>>
  readonly defaults: { onApproval?: ApprovalHandler | undefined; onQuestion?: QuestionHandler | undefined }
}

export interface SessionHandlers {
  tools?: readonly ClientTool[] | undefined
  onApproval?: ApprovalHandler | undefined
  onQuestion?: QuestionHandler | undefined
}

interface Subscriber { queue: SessionUpdate[]; wake?: (() => void) | undefined; ended?: { error?: Error | undefined } }

/** The final assistant text of a turn's events: the text parts of its last assistant/message. */
export function finalText(events: readonly SessionEvent[]): string {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!
    if (e.type !== 'assistant/message') continue
    const parts = Array.isArray(e.data?.content) ? e.data.content as { type: string; text?: string }[] : []
    return parts.filter((p) => p.type === 'text' && typeof p.text === 'string').map((p) => p.text).join('')
  }
  return ''
}

/** Usage summed over the turn's step/end events (assistant/message usage when no step reported any). */
export function turnUsage(events: readonly SessionEvent[]): Usage {
  const sum: Usage = { inputTokens: 0, outputTokens: 0 }
  const add = (u: Partial<Usage> | undefined) => {
    if (!u) return
    for (const key of ['inputTokens', 'outputTokens', 'reasoningTokens', 'cacheReadTokens', 'cacheWriteTokens'] as const) {
      if (typeof u[key] === 'number') sum[key] = (sum[key] ?? 0) + u[key]
    }
  }
  const steps = events.filter((e) => e.type === 'step/end' && e.data?.usage)
  for (const e of steps.length ? steps : events.filter((e) => e.type === 'assistant/message')) add(e.data?.usage as Partial<Usage> | undefined)
  return sum
}

/**
 * A session this client owns. Events arrive as `session/event` notifications (durable
 * events only, in seq order) and fan out to every `events()` iterator and `run()`.
 */
export class Session {
  detail: SessionDetail
  private readonly subscribers = new Set<Subscriber>()
  private readonly runHandlers: RunOptions[] = []
  readonly tools: ReadonlyMap<string, ClientTool>
  private ended: { error?: Error | undefined } | undefined

  constructor(private readonly link: SessionLink, detail: SessionDetail, private readonly handlers: SessionHandlers = {}) {
    this.detail = detail
    this.tools = new Map((handlers.tools ?? []).map((t) => [t.name, t]))
  }

  get id(): string {
    return this.detail.id
  }

  /** Sends a prompt; answers at once with the receipt (the turn arrives as events). */
  prompt(prompt: ParamsOf<'session/prompt'>['prompt'], options: CallOptions & { mode?: 'queue' | 'steer' } = {}): Promise<ResultOf<'session/prompt'>> {
    return this.link.call('session/prompt', { sessionId: this.id, prompt, ...(options.mode ? { mode: options.mode } : {}) }, options)
  }

  cancel(options: CallOptions = {}): Promise<ResultOf<'session/cancel'>> {
    return this.link.call('session/cancel', { sessionId: this.id }, options)
  }

  /** Releases the session in the server (turns cancelled, log flushed); its iterators end. */
  async close(options: CallOptions = {}): Promise<void> {
    await this.link.call('session/close', { sessionId: this.id }, options)
    this.end()
  }

  /** Every event from now on, until the session or the client closes (a broken transport throws). */
  events(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<SessionUpdate> {
    const sub: Subscriber = { queue: [] }
    if (this.ended) sub.ended = this.ended
    this.subscribers.add(sub)
    const { signal } = options
    const stop = () => {
      this.subscribers.delete(sub)
      signal?.removeEventListener('abort', onAbort)
    }
    const onAbort = () => {
      sub.ended ??= { error: abortError(signal!) }
      sub.wake?.()
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    if (signal?.aborted) onAbort()
    const iterator: AsyncIterableIterator<SessionUpdate> = {
      [Symbol.asyncIterator]: () => iterator,
      next: async () => {
        for (;;) {
          const item = sub.queue.shift()
          if (item) return { value: item, done: false }
          if (sub.ended) {
            stop()
            if (sub.ended.error) throw sub.ended.error
            return { value: undefined, done: true }
          }
          await new Promise<void>((r) => { sub.wake = r })
          sub.wake = undefined
        }
      },
      return: async () => {
        stop()
        return { value: undefined, done: true }
      },
    }
    return iterator
  }

  /**
   * Prompts and waits for the end of that prompt's turn: `text` is its final assistant
   * text, `reason` the turn/end reason. Approvals and questions of the session go to
   * this run's handlers while it runs.
   */
  async run(prompt: ParamsOf<'session/prompt'>['prompt'], options: RunOptions = {}): Promise<RunResult> {
    const { signal } = options
    if (signal?.aborted) throw abortError(signal)
    const updates = this.events(signal ? { signal } : {})
    this.runHandlers.push(options)
    const onAbort = () => void this.cancel().catch(() => undefined)
    signal?.addEventListener('abort', onAbort, { once: true })
    try {
      const { promptId } = await this.prompt(prompt, signal ? { signal } : {})
      const events: SessionEvent[] = []
      let turnStart: SessionEvent | undefined
      let mine = false
      for await (const { event, view } of updates) {
        if (!mine) {
          if (event.type === 'turn/start') turnStart = event
          if (event.type !== 'user/message' || event.data?.id !== promptId) continue
          mine = true
          if (turnStart) {
            events.push(turnStart)
            options.onEvent?.(turnStart, null)
          }
        }
        events.push(event)
        options.onEvent?.(event, view)
        if (event.type === 'turn/end') {
          return { text: finalText(events), reason: String(event.data?.reason), usage: turnUsage(events), events, promptId }
        }
      }
      throw new Error(`session ${this.id} closed before the turn of prompt ${promptId} ended`)
    } finally {
      signal?.removeEventListener('abort', onAbort)
      this.runHandlers.splice(this.runHandlers.indexOf(options), 1)
      await updates.return?.()
    }
  }

  /** Client side: a `session/event` notification for this session. */
  deliver(update: SessionUpdate): void {
    for (const sub of this.subscribers) {
      sub.queue.push(update)
      sub.wake?.()
    }
  }

  /** Client side: no more events (closed, or the transport failed with `error`). */
  end(error?: Error): void {
    this.ended = { error }
    for (const sub of this.subscribers) {
      sub.ended ??= { error }
      sub.wake?.()
    }
  }

  approvalHandler(): ApprovalHandler | undefined {
    return this.runHandlers.findLast((h) => h.onApproval)?.onApproval ?? this.handlers.onApproval ?? this.link.defaults.onApproval
  }

  questionHandler(): QuestionHandler | undefined {
    return this.runHandlers.findLast((h) => h.onQuestion)?.onQuestion ?? this.handlers.onQuestion ?? this.link.defaults.onQuestion
  }
}
