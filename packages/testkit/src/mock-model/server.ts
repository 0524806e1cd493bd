/**
 * The scripted mock model: a real HTTP server on 127.0.0.1 speaking OpenAI chat completions
 * (`POST /chat/completions`, `/v1/chat/completions`), Anthropic Messages (`POST /v1/messages`,
 * `/messages`) and the OpenAI Responses API (`POST /v1/responses`, `/responses`). Each model
 * request is recorded, then consumes the next script step.
 *
 * Contract:
 * - script exhausted → HTTP 500 "mock script exhausted after N requests" (also in `failures`);
 * - a step's `expect` unmet → HTTP 400 "mock expectation failed …" (also in `failures`);
 * - recorded headers keep `authorization` / `x-api-key` present but valued '<redacted>';
 * - control surface: `GET /__mock/requests`, `GET /__mock/failures`, `POST /__mock/script`
 *   (YAML or JSON body; replaces the script and rewinds it), `POST /__mock/reset` (rewinds the
 *   script, clears recordings, failures and the tool-call id counter).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { anthropicErrorBody, anthropicFault, anthropicJson, anthropicStream, anthropicStreamError } from './anthropic.js'
import { checkExpect, viewRequest, type MockProtocol } from './expect.js'
import { openaiErrorBody, openaiFault, openaiJson, openaiStream, openaiStreamError } from './openai.js'
import { DEFAULT_PARTIAL_TEXT, normalizeReply, type RenderContext, type Reply, type StreamPlan } from './reply.js'
import { responsesErrorBody, responsesFault, responsesJson, responsesStream, responsesStreamError } from './responses.js'
import { isErrorStep, isFaultStep, parseScript, parseScriptText, type FaultKind, type Script, type Step } from './script.js'

export interface RecordedRequest {
  protocol: MockProtocol
  path: string
  /** Lower-cased names; credential values replaced by '<redacted>'. */
  headers: Record<string, string>
  body: unknown
  /** Milliseconds since the epoch: when the body was read and parsed (what `stepCosts` spans). */
  time: number
  /**
   * Epoch milliseconds (sub-millisecond): `receivedAt` when the body's last byte had arrived,
   * before the mock joined, decoded and parsed it; `answeredAt` when the mock had handed its whole answer to the socket
   * (unset while the answer is being written, and for an answer that never ends). The span
   * between them is the mock's own work; `answeredAt` → the next `receivedAt` is the client's.
   */
  receivedAt: number
  answeredAt?: number
}

export interface MockModel {
  /** `http://127.0.0.1:PORT` — use as the provider base URL. */
  url: string
  /** Live list of model requests received, in order. */
  requests: RecordedRequest[]
  /** Live list of loud failures (exhausted script, unmet expectations, unparsable bodies). */
  failures: string[]
  /** Replaces the script and rewinds it to its first step. */
  setScript(script: Script): void
  close(): Promise<void>
}

export interface MockModelOptions {
  script?: Script
  port?: number
  host?: string
  /** Called with one line per model request (the CLI prints these to stderr). */
  log?: (line: string) => void
  /** Called synchronously as each model request is recorded (e.g. to sample the client's CPU). */
  onRequest?: (request: RecordedRequest) => void
}

const ROUTES: Record<string, MockProtocol> = {
  '/chat/completions': 'openai',
  '/v1/chat/completions': 'openai',
  '/v1/messages': 'anthropic',
  '/messages': 'anthropic',
  '/v1/responses': 'responses',
  '/responses': 'responses',
}

/** One wire format: how it renders replies, faults and errors. */
interface Wire {
  idPrefix: string
  errorBody(status: number, message: string): unknown
  json(reply: Reply, ctx: RenderContext): unknown
  stream(reply: Reply, ctx: RenderContext): StreamPlan
  fault(kind: FaultKind, text: string, reply: Reply, ctx: RenderContext): StreamPlan
  streamError(status: number, message: string, reply: Reply, ctx: RenderContext): StreamPlan
}

const WIRES: Record<MockProtocol, Wire> = {
  openai: {
    idPrefix: 'chatcmpl-mock-', errorBody: openaiErrorBody, json: openaiJson, stream: openaiStream, fault: openaiFault,
    streamError: (status, message, _reply, ctx) => openaiStreamError(status, message, ctx),
  },
  anthropic: {
    idPrefix: 'msg_mock_', errorBody: anthropicErrorBody, json: anthropicJson, stream: anthropicStream, fault: anthropicFault,
    streamError: anthropicStreamError,
  },
  responses: {
    idPrefix: 'resp_mock_', errorBody: responsesErrorBody, json: responsesJson, stream: responsesStream, fault: responsesFault,
    streamError: (status, message, _reply, ctx) => responsesStreamError(status, message, ctx),
  },
}

const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'api-key'])

function redactHeaders(raw: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue
    out[name] = SECRET_HEADERS.has(name) ? '<redacted>' : Array.isArray(value) ? value.join(', ') : value
  }
  return out
}

/** Epoch milliseconds with sub-millisecond resolution. */
function now(): number {
  return performance.timeOrigin + performance.now()
}

/** The body's text, and when its last byte had arrived (before the mock joined and decoded it). */
async function readBody(req: IncomingMessage): Promise<{ text: string; receivedAt: number }> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const receivedAt = now()
  return { text: Buffer.concat(chunks).toString('utf8'), receivedAt }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

function stepKind(step: Step): string {
  if (isErrorStep(step)) return `error ${step.error.status}${step.error.inStream ? ' (in stream)' : ''}`
  if (isFaultStep(step)) return `fault ${step.fault}`
  const parts = [step.reasoning ? 'reasoning' : '', step.text ? 'text' : '', step.toolCalls?.length ? `${step.toolCalls.length} tool call(s)` : '']
  return parts.filter(Boolean).join(' + ') || 'empty reply'
}

class MockModelServer {
  readonly requests: RecordedRequest[] = []
  readonly failures: string[] = []
  private script: Script
  private cursor = 0
  private callCounter = 0
  private responseCounter = 0

  constructor(script: Script, private readonly log: (line: string) => void, private readonly onRequest: (r: RecordedRequest) => void) {
    this.script = parseScript(script)
  }

  setScript(script: Script): void {
    this.script = parseScript(script)
    this.cursor = 0
  }

  reset(): void {
    this.cursor = 0
    this.callCounter = 0
    this.responseCounter = 0
    this.requests.length = 0
    this.failures.length = 0
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    if (path.startsWith('/__mock/')) return this.control(req, res, path)
    const protocol = ROUTES[path]
    if (!protocol || req.method !== 'POST') {
      sendJson(res, 404, { error: { message: `mock model: no route for ${req.method ?? '?'} ${path}` } })
      return
    }
    const { text, receivedAt } = await readBody(req)
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
    const recorded: RecordedRequest = { protocol, path, headers: redactHeaders(req.headers), body, time: Date.now(), receivedAt }
    this.requests.push(recorded)
    res.once('finish', () => { recorded.answeredAt = now() })
    this.onRequest(recorded)
    const n = this.requests.length
    const errorBody = WIRES[protocol].errorBody
    if (typeof body !== 'object' || body === null) {
      this.fail(res, 400, `mock model: request #${n} body is not a JSON object`, errorBody)
      return
    }
    const step = this.script[this.cursor]
    if (!step) {
      this.fail(res, 500, `mock script exhausted after ${this.script.length} requests (request #${n}: ${protocol} ${path})`, errorBody)
      return
    }
    const stepNo = ++this.cursor
    this.log(`#${n} ${protocol} POST ${path} → step ${stepNo}/${this.script.length} (${stepKind(step)})`)
    // the view walks the whole history: only a step with expectations pays for it
    const problems = step.expect ? checkExpect(step.expect, viewRequest(protocol, body)) : []
    if (problems.length > 0) {
      this.fail(res, 400, `mock expectation failed at request #${n} (step ${stepNo}): ${problems.join('; ')}`, errorBody)
      return
    }
    await this.answer(protocol, step, body as Record<string, unknown>, text.length, res)
  }

  private fail(res: ServerResponse, status: number, message: string, errorBody: (s: number, m: string) => unknown): void {
    this.failures.push(message)
    this.log(message)
    sendJson(res, status, errorBody(status, message))
  }

  private async answer(protocol: MockProtocol, step: Step, body: Record<string, unknown>, chars: number, res: ServerResponse): Promise<void> {
    const streaming = body.stream === true
    const wire = WIRES[protocol]
    const ctx: RenderContext = {
      id: `${wire.idPrefix}${++this.responseCounter}`,
      model: typeof body.model === 'string' ? body.model : 'mock-model',
      includeUsage: (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true,
    }
    if (isErrorStep(step)) {
      const { status, retryAfter, inStream } = step.error
      const message = step.error.message ?? `mock error ${status}`
      if (inStream && streaming) return this.stream(res, wire.streamError(status, message, normalizeReply({}, chars, () => this.nextCallId()), ctx), 0)
      const headers: Record<string, string> = retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }
      sendJson(res, status, wire.errorBody(status, message), headers)
      return
    }
    if (isFaultStep(step)) {
      const reply = normalizeReply({}, chars, () => this.nextCallId())
      if (!streaming) return this.nonStreamFault(step.fault, res, wire.json(reply, ctx))
      return this.stream(res, wire.fault(step.fault, step.text ?? DEFAULT_PARTIAL_TEXT, reply, ctx), 0)
    }
    const reply = normalizeReply(step, chars, () => this.nextCallId())
    if (!streaming) {
      sendJson(res, 200, wire.json(reply, ctx))
      return
    }
    return this.stream(res, wire.stream(reply, ctx), step.delayMs ?? 0)
  }

  private nextCallId(): string {
    return `call_${++this.callCounter}`
  }

  private nonStreamFault(fault: FaultKind, res: ServerResponse, emptyBody: unknown): void {
    switch (fault) {
      case 'cut':
        res.socket?.destroy()
        return
      case 'stall':
        res.writeHead(200, { 'content-type': 'application/json' })
        res.flushHeaders()
        return
      case 'malformed':
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end('{"choices": [oops')
        return
      case 'empty':
        sendJson(res, 200, emptyBody)
    }
  }

  /** Writes the frames (pausing `delayMs` between them), then closes, destroys or hangs. */
  private async stream(res: ServerResponse, plan: StreamPlan, delayMs: number): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    res.flushHeaders()
    for (const [i, frame] of plan.frames.entries()) {
      if (i > 0 && delayMs > 0) await sleep(delayMs)
      if (res.destroyed) return
      await new Promise<void>((resolve) => res.write(frame, () => resolve()))
    }
    if (plan.end === 'close') res.end()
    else if (plan.end === 'destroy') res.socket?.destroy()
    // 'hang': leave the response open until the client goes away or the server closes.
  }

  private async control(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const route = `${req.method ?? ''} ${path}`
    if (route === 'GET /__mock/requests') return sendJson(res, 200, this.requests)
    if (route === 'GET /__mock/failures') return sendJson(res, 200, this.failures)
    if (route === 'POST /__mock/reset') {
      this.reset()
      return sendJson(res, 200, { ok: true })
    }
    if (route === 'POST /__mock/script') {
      try {
        this.setScript(parseScriptText((await readBody(req)).text, 'POST /__mock/script'))
      } catch (error) {
        return sendJson(res, 400, { error: { message: error instanceof Error ? error.message : String(error) } })
      }
      return sendJson(res, 200, { ok: true, steps: this.script.length })
    }
    sendJson(res, 404, { error: { message: `mock model: no control route ${route}` } })
  }
}

/** Starts the mock on `host` (default 127.0.0.1) and `port` (default: any free port). */
export async function startMockModel(opts: MockModelOptions = {}): Promise<MockModel> {
  const state = new MockModelServer(opts.script ?? [], opts.log ?? (() => {}), opts.onRequest ?? (() => {}))
  const server = createServer((req, res) => {
    state.handle(req, res).catch((error: unknown) => {
      const message = `mock model internal error: ${error instanceof Error ? error.message : String(error)}`
      state.failures.push(message)
      if (!res.headersSent) sendJson(res, 500, { error: { message } })
      else res.destroy()
    })
  })
  const host = opts.host ?? '127.0.0.1'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host
  return {
    url: `http://${shownHost}:${port}`,
    requests: state.requests,
    failures: state.failures,
    setScript: (script) => state.setScript(script),
    close: () => new Promise<void>((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()))
      server.closeAllConnections()
    }),
  }
}
