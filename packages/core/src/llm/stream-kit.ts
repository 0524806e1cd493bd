/**
 * Provider-neutral pieces of one streaming attempt: the HTTP/SSE transport with abort and
 * idle watchdog, HTTP-status → `LlmFailure` mapping, and the block tracker that keeps the
 * `StreamChunk` contract (every block opened, fed, closed; usage before finish).
 * Shared by the provider adapters (`@dsh/llm-openai`, `@dsh/llm-anthropic`), which import it
 * from `@dsh/core` (neither adapter may depend on the other).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { createRequire } from 'node:module'
import type { AssistantBlock, BlockKind, FinishReason, LlmErrorCode, LlmFailure, StreamChunk, Usage } from '@dsh/protocol'

export const DEFAULT_IDLE_TIMEOUT_MS = 120_000

let https: typeof import('node:https') | undefined
/** node:https (TLS) on the first https:// request: a model on http:// (a local server, the mock) never loads it (0095). */
function httpsRequest(...args: Parameters<typeof httpRequest>): ReturnType<typeof httpRequest> {
  https ??= createRequire(import.meta.url)('node:https') as typeof import('node:https')
  return https.request(...args)
}

/** A failed attempt, carried as an exception inside an adapter until it becomes a `finish` chunk. */
export class AttemptFailure extends Error {
  constructor(readonly failure: LlmFailure) {
    super(failure.message)
  }
}

/** The caller's signal fired: the attempt ends with `finish {reason: 'aborted'}`. */
export class AttemptAborted extends Error {
  constructor() {
    super('aborted')
  }
}

const RETRYABLE: ReadonlySet<LlmErrorCode> = new Set(['RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'EMPTY_RESPONSE', 'MALFORMED_RESPONSE'])

/** Builds a failure; `apiKey` (when given) is scrubbed from the message. */
export function failure(code: LlmErrorCode, message: string, extra: { provider: string; apiKey?: string; status?: number; retryAfterMs?: number }): LlmFailure {
  const text = extra.apiKey && extra.apiKey.length >= 4 ? message.split(extra.apiKey).join('<redacted>') : message
  const out: LlmFailure = { code, message: text, retryable: RETRYABLE.has(code), provider: extra.provider }
  if (extra.status !== undefined) out.status = extra.status
  if (extra.retryAfterMs !== undefined) out.retryAfterMs = extra.retryAfterMs
  return out
}

/** `retry-after-ms`, or `retry-after` as seconds or an HTTP date, in milliseconds (never negative). */
export function parseRetryAfter(headers: HeaderReader, now = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms')
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Math.round(Number(ms)))
  const value = headers.get('retry-after')
  if (value === null || value.trim() === '') return undefined
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

const CONTEXT_WORDING = /context[ _-]?(length|window)|maximum context|prompt is too long|too many tokens|reduce the length/i

/** The human part of an error body: `error.message` of a JSON body, else the trimmed text. */
function bodyMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown }
    if (typeof parsed.error === 'string') return parsed.error
    if (typeof parsed.error?.message === 'string') return parsed.error.message
    if (typeof parsed.message === 'string') return parsed.message
  } catch {
    // not JSON: fall through to the raw text
  }
  const text = body.trim()
  return text.length > 500 ? `${text.slice(0, 500)}…` : text
}

/** Maps a non-2xx response to a stable failure code. */
export function httpFailure(status: number, body: string, headers: HeaderReader, provider: string, apiKey: string): LlmFailure {
  const detail = bodyMessage(body) || `HTTP ${status}`
  const extra = { provider, apiKey, status }
  if (status === 401 || status === 403) {
    return failure('AUTH', `provider "${provider}" rejected the credentials (HTTP ${status}): ${detail}`, extra)
  }
  if (status === 429) {
    const retryAfterMs = parseRetryAfter(headers)
    return failure('RATE_LIMIT', `provider "${provider}" is rate limiting (HTTP 429): ${detail}`,
      retryAfterMs === undefined ? extra : { ...extra, retryAfterMs })
  }
  if (status >= 500) return failure('SERVER', `provider "${provider}" server error (HTTP ${status}): ${detail}`, extra)
  if (status === 408) return failure('TIMEOUT', `provider "${provider}" timed out (HTTP 408): ${detail}`, extra)
  if ((status === 400 || status === 413) && CONTEXT_WORDING.test(detail)) {
    return failure('CONTEXT_WINDOW_EXCEEDED', `provider "${provider}": the request exceeds the context window (HTTP ${status}): ${detail}`, extra)
  }
  return failure('BAD_REQUEST', `provider "${provider}" rejected the request (HTTP ${status}): ${detail}`, extra)
}

export interface SseRequest {
  url: string
  headers: Record<string, string>
  /** Sent as JSON: a string is taken as the JSON text itself (already serialised), anything else is `JSON.stringify`ed. */
  body: unknown
  /** The JSON text already encoded as UTF-8, sent in order (the content-length is their sum); when given, `body` is not read. */
  bytes?: readonly Uint8Array[] | undefined
  signal: AbortSignal
  idleTimeoutMs: number
  provider: string
  apiKey: string
}

/** What failure mapping reads of response headers. */
export interface HeaderReader { get(name: string): string | null }

interface HttpResponse { status: number; headers: HeaderReader; body: IncomingMessage }

/**
 * POST over node:http(s) rather than fetch: undici (fetch) costs ~8 MB of resident memory
 * on first use, paid by every dsh process; node's agent keeps connections alive the same way.
 */
function httpPost(url: string, headers: Record<string, string>, body: readonly Uint8Array[], signal: AbortSignal): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url)
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest
    let length = 0
    for (const part of body) length += part.byteLength
    const request = send(target, { method: 'POST', headers: { ...headers, 'content-length': length } }, (res) => {
      // read errors surface through the body's iterator; this only keeps them from being unhandled
      res.on('error', () => {})
      signal.addEventListener('abort', () => res.destroy(new Error('aborted')), { once: true })
      resolve({
        status: res.statusCode ?? 0,
        headers: { get: (name) => { const v = res.headers[name.toLowerCase()]; return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v } },
        body: res,
      })
    })
    const onAbort = () => request.destroy(new Error('aborted'))
    signal.addEventListener('abort', onAbort, { once: true })
    request.on('error', (error) => {
      signal.removeEventListener('abort', onAbort)
      reject(error)
    })
    request.on('close', () => signal.removeEventListener('abort', onAbort))
    for (let i = 0; i < body.length - 1; i++) request.write(body[i])
    request.end(body[body.length - 1])
  })
}

async function readAll(body: IncomingMessage): Promise<string> {
  const parts: Buffer[] = []
  for await (const part of body) parts.push(part as Buffer)
  return Buffer.concat(parts).toString('utf8')
}

function causeText(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined
  if (cause && typeof cause.code === 'string') return `${error.message} (${cause.code})`
  if (cause && typeof cause.message === 'string') return `${error.message}: ${cause.message}`
  return error.message
}

/**
 * POSTs `body` as JSON and yields the response's SSE events. Throws `AttemptAborted` when
 * `signal` fires, `AttemptFailure` for HTTP errors (mapped by `httpFailure`), TIMEOUT when no
 * byte arrives for `idleTimeoutMs` while a read is pending, TRANSPORT when the connection fails.
 * Stopping the iteration early releases the connection: a consumer that stops at an event
 * (an adapter at its protocol's last one) leaves it to the agent for the next request once
 * the rest of the body is read, within SETTLE_MS, else it is torn down; a failure or the
 * caller's abort tears it down at once.
 */
export async function* postSse(req: SseRequest): AsyncGenerator<EventSourceMessage, void, undefined> {
  if (req.signal.aborted) throw new AttemptAborted()
  const controller = new AbortController()
  let timedOut = false
  let timer: NodeJS.Timeout | undefined
  const arm = (): void => {
    timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, req.idleTimeoutMs)
  }
  const disarm = (): void => clearTimeout(timer)
  const onAbort = (): void => controller.abort()
  req.signal.addEventListener('abort', onAbort, { once: true })
  const classify = (error: unknown): Error => {
    if (error instanceof AttemptFailure || error instanceof AttemptAborted) return error
    if (req.signal.aborted) return new AttemptAborted()
    const extra = { provider: req.provider, apiKey: req.apiKey }
    if (timedOut) return new AttemptFailure(failure('TIMEOUT', `provider "${req.provider}" sent nothing for ${req.idleTimeoutMs} ms`, extra))
    return new AttemptFailure(failure('TRANSPORT', `provider "${req.provider}" connection failed: ${causeText(error)}`, extra))
  }
  let drained = false
  /** The body's reader while the consumer holds an event (a stop there is not a failure). */
  let atEvent: AsyncIterator<Buffer> | undefined
  try {
    let response: HttpResponse
    arm()
    try {
      response = await httpPost(req.url, { 'content-type': 'application/json', accept: 'text/event-stream', ...req.headers }, req.bytes ?? [Buffer.from(typeof req.body === 'string' ? req.body : JSON.stringify(req.body), 'utf8')], controller.signal)
      if (response.status < 200 || response.status > 299) {
        const text = await readAll(response.body).catch(() => '')
        throw new AttemptFailure(httpFailure(response.status, text, response.headers, req.provider, req.apiKey))
      }
    } catch (error) {
      throw classify(error)
    } finally {
      disarm()
    }
    const chunks = response.body[Symbol.asyncIterator]()
    const decoder = new TextDecoder()
    const queue: EventSourceMessage[] = []
    const parser = createParser({ onEvent: (event) => queue.push(event) })
    for (;;) {
      let read: IteratorResult<Buffer>
      arm()
      try {
        read = await chunks.next()
      } catch (error) {
        throw classify(error)
      } finally {
        disarm()
      }
      if (read.done) {
        drained = true
        break
      }
      parser.feed(decoder.decode(read.value, { stream: true }))
      while (queue.length > 0) {
        atEvent = chunks
        yield queue.shift()!
        atEvent = undefined
      }
    }
    parser.feed(decoder.decode())
    parser.reset({ consume: true })
    while (queue.length > 0) yield queue.shift()!
  } finally {
    disarm()
    req.signal.removeEventListener('abort', onAbort)
    // a fully read response leaves its keep-alive socket to the agent; anything else is torn down
    if (!drained) {
      if (atEvent && !req.signal.aborted) void drainThenRelease(atEvent, controller)
      else controller.abort()
    }
  }
}

/** How long the rest of a body may take once the consumer stopped reading it. */
const SETTLE_MS = 1000

/** Reads and drops the rest of a body, so its socket goes back to the agent; aborts it after SETTLE_MS. */
async function drainThenRelease(chunks: AsyncIterator<Buffer>, controller: AbortController): Promise<void> {
  const timer = setTimeout(() => controller.abort(), SETTLE_MS)
  timer.unref()
  try {
    while (!(await chunks.next()).done) { /* dropped: the consumer has what it wanted */ }
  } catch {
    controller.abort() // a read error after the consumer stopped: nothing to report to
  } finally {
    clearTimeout(timer)
  }
}

type OpenBlock =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string; signature?: string; redacted?: string }
  | { kind: 'tool-call'; id: string; name: string; args: string }

/**
 * Tracks open blocks and turns provider deltas into chunks. Indices are assigned in
 * opening order from 0; the assembled message is the `block-end` blocks sorted by index.
 */
export class BlockTracker {
  private nextIndex = 0
  private readonly open = new Map<number, OpenBlock>()
  /** True once a non-empty text block or any tool call was produced. */
  hasContent = false

  start(kind: BlockKind): { index: number; chunk: StreamChunk } {
    const index = this.nextIndex++
    this.open.set(index, kind.kind === 'tool-call' ? { kind: 'tool-call', id: kind.id, name: kind.name, args: '' } : { kind: kind.kind, text: '' })
    if (kind.kind === 'tool-call') this.hasContent = true
    return { index, chunk: { type: 'block-start', index, block: kind } }
  }

  isOpen(index: number): boolean {
    return this.open.has(index)
  }

  /** A text or reasoning delta (by the open block's kind) or a raw tool-argument fragment. */
  delta(index: number, text: string): StreamChunk {
    const block = this.get(index)
    if (block.kind === 'tool-call') {
      block.args += text
      return { type: 'tool-call-delta', index, json: text }
    }
    block.text += text
    if (block.kind === 'text') {
      if (text !== '') this.hasContent = true
      return { type: 'text-delta', index, text }
    }
    return { type: 'reasoning-delta', index, text }
  }

  /** Records reasoning metadata that has no delta chunk (signature, redacted payload). */
  annotate(index: number, meta: { signature?: string; redacted?: string }): void {
    const block = this.get(index)
    if (block.kind !== 'reasoning') return
    if (meta.signature !== undefined) block.signature = (block.signature ?? '') + meta.signature
    if (meta.redacted !== undefined) block.redacted = meta.redacted
  }

  end(index: number): StreamChunk {
    const block = this.get(index)
    this.open.delete(index)
    return { type: 'block-end', index, block: assemble(block) }
  }

  /** Closes every open block, in index order. */
  endAll(): StreamChunk[] {
    return [...this.open.keys()].sort((a, b) => a - b).map((index) => this.end(index))
  }

  /** Closes all blocks, then usage (if known), then the one finish chunk. */
  finish(reason: FinishReason, usage: Usage | undefined, error?: LlmFailure): StreamChunk[] {
    const chunks = this.endAll()
    if (usage) chunks.push({ type: 'usage', usage })
    chunks.push(error ? { type: 'finish', reason, error } : { type: 'finish', reason })
    return chunks
  }

  private get(index: number): OpenBlock {
    const block = this.open.get(index)
    if (!block) throw new Error(`block ${index} is not open`)
    return block
  }
}

function assemble(block: OpenBlock): AssistantBlock {
  switch (block.kind) {
    case 'text': return { type: 'text', text: block.text }
    case 'tool-call': return { type: 'tool-call', id: block.id, name: block.name, arguments: block.args }
    case 'reasoning': {
      const out: AssistantBlock = { type: 'reasoning', text: block.text }
      if (block.signature !== undefined) out.signature = block.signature
      if (block.redacted !== undefined) out.redacted = block.redacted
      return out
    }
  }
}

/** The failure an adapter reports for any exception escaping its stream loop. */
export function toFailure(error: unknown, provider: string, apiKey: string): LlmFailure | 'aborted' {
  if (error instanceof AttemptAborted) return 'aborted'
  if (error instanceof AttemptFailure) return error.failure
  // Anything else was thrown while decoding provider data of an unexpected shape.
  return failure('MALFORMED_RESPONSE', `provider "${provider}" sent an unexpected stream: ${error instanceof Error ? error.message : String(error)}`, { provider, apiKey })
}
