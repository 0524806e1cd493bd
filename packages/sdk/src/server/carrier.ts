import { CLIENT_REQUESTS, issuesOf, METHODS, type ClientRequestName, type NotificationName } from '@dsh/host-api'
import type { ClientCapabilities, ClientRequestParams, ClientRequestResult, HostClient, HostConnection, NotificationParams } from '@dsh/host'
import { DshError } from '@dsh/protocol'
import { DEFAULT_MAX_FRAME_BYTES, frame, LineSplitter } from '../framing.js'
import * as rpc from '../jsonrpc.js'
import { invalidRequest, methodNotFound, parseError, toRpcError } from './errors.js'

export interface CarrierOptions {
  input: NodeJS.ReadableStream
  output: NodeJS.WritableStream
  /** `ctx.host.connect`. Called once, when the peer's `initialize` is valid. */
  connect(client: HostClient): HostConnection
  /** One line for stderr (never stdout). */
  log(line: string): void
  debug?: ((line: string) => void) | undefined
  maxFrameBytes?: number
  /**
   * At most this long for the host to close (turns cancelled, logs flushed); default 3000 ms.
   * Closing is quick when the tools' processes die on SIGTERM; one that ignores it is
   * SIGKILLed after ctx.subprocess's kill grace (2 s), and the log must still get its turn/end.
   */
  closeTimeoutMs?: number
  /** Above this many buffered output bytes, `session/output` notifications are dropped (default 4 MiB). */
  outputHighWater?: number
}

interface Pending { method: ClientRequestName; resolve(value: unknown): void; reject(error: Error): void }

/** Carrier-level notification (not in the table): the server no longer waits for request `id`. */
export const CANCEL_REQUEST = '$/cancelRequest'

/**
 * One `dsh sdk` peer: NDJSON JSON-RPC 2.0 between `input`/`output` and one host
 * connection. Contract: every request gets exactly one answer (garbage → -32700 with id
 * null, a bad envelope → -32600, before `initialize` → -32600, unknown or web-only
 * method → -32601, invalid params → -32602 with `data.issues`), and the peer keeps
 * being served after any of them. Requests are handed to the host in arrival order.
 * Server→client requests get numeric ids; an answer is checked against the table (an
 * invalid one counts as a refusal). End of input, or an output that broke, closes the
 * host connection (turns cancelled, sessions flushed) and resolves `closed`.
 */
export class SdkCarrier {
  readonly closed: Promise<void>
  private resolveClosed!: () => void
  private connection: HostConnection | undefined
  private initializing: Promise<void> | undefined
  private closing = false
  private broken = false
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  private readonly splitter: LineSplitter

  constructor(private readonly options: CarrierOptions) {
    this.closed = new Promise((r) => { this.resolveClosed = r })
    this.splitter = new LineSplitter({
      line: (text) => this.onLine(text),
      oversize: (bytes) => this.send(rpc.error(null, { code: -32700, message: `frame of ${bytes} bytes exceeds the limit of ${this.splitter.maxBytes}`, data: { code: 'FRAME_TOO_LARGE' } })),
    }, options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES)
    const { input, output } = options
    input.on('data', (chunk: Buffer | string) => this.splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk))
    input.on('end', () => {
      this.splitter.end()
      void this.close('end of input')
    })
    input.on('error', (e: Error) => void this.close(`input failed: ${e.message}`))
    output.on('error', (e: Error) => {
      this.broken = true
      void this.close(`output failed: ${e.message}`)
    })
  }

  /** Idempotent: stops serving, refuses what waits on the client, closes the host connection. */
  async close(why = 'closed'): Promise<void> {
    if (this.closing) return this.closed
    this.closing = true
    this.options.debug?.(`closing: ${why}`)
    for (const p of this.pending.values()) p.reject(new DshError('CLIENT_GONE', `the sdk client went away (${why})`))
    this.pending.clear()
    await this.initializing?.catch(() => undefined)
    const connection = this.connection
    if (connection) {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<void>((r) => { timer = setTimeout(r, this.options.closeTimeoutMs ?? 3000) })
      await Promise.race([connection.close().catch((e: unknown) => this.options.log(`sdk: closing the host connection failed: ${String(e)}`)), timeout])
      clearTimeout(timer)
    }
    this.resolveClosed()
    return this.closed
  }

  private send(message: unknown): void {
    if (this.broken) return
    this.options.output.write(frame(message))
  }

  private onLine(text: string): void {
    const message = rpc.parseMessage(text)
    switch (message.kind) {
      case 'parse-error': return this.send(rpc.error(null, parseError(message.message, text)))
      case 'invalid': return this.send(rpc.error(message.id, invalidRequest(`invalid request: ${message.message}`)))
      case 'notification': return this.options.debug?.(`ignored notification ${message.method.slice(0, 80)}`)
      case 'result': return this.answered(message.id, message.result, undefined)
      case 'error': return message.id === null ? this.options.log(`sdk: the client reported an error: ${message.error.message.slice(0, 200)}`) : this.answered(message.id, undefined, message.error)
      case 'request':
        this.options.debug?.(`<- ${message.method.slice(0, 80)} #${String(message.id).slice(0, 40)}`)
        return void this.dispatch(message.id, message.method, message.params)
    }
  }

  private async dispatch(id: rpc.RpcId, method: string, params: unknown): Promise<void> {
    if (this.closing) return
    try {
      if (method === 'initialize') return this.send(rpc.result(id, await this.initialize(params)))
      if (this.initializing) await this.initializing.catch(() => undefined)
      const connection = this.connection
      if (!connection) return this.send(rpc.error(id, invalidRequest('send initialize first')))
      const def = Object.hasOwn(METHODS, method) ? METHODS[method as keyof typeof METHODS] : undefined
      if (!def || !(def.carriers as readonly string[]).includes('sdk')) return this.send(rpc.error(id, methodNotFound(method)))
      this.send(rpc.result(id, await connection.callUnchecked(method, params ?? {})))
    } catch (error) {
      if (!(error instanceof DshError)) this.options.log(`sdk: ${method.slice(0, 80)} failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
      this.send(rpc.error(id, toRpcError(error)))
    }
  }

  private async initialize(params: unknown): Promise<unknown> {
    if (this.connection || this.initializing) throw new DshError('INVALID_REQUEST', 'initialize was already sent')
    const parsed = METHODS.initialize.params.safeParse(params ?? {})
    if (!parsed.success) throw new DshError('INVALID_PARAMS', 'invalid params for initialize', { data: { issues: issuesOf(parsed.error) } })
    const caps = parsed.data.capabilities ?? {}
    const capabilities: ClientCapabilities = { approvals: caps.approvals === true, questions: caps.questions === true, tools: caps.tools === true }
    let done!: () => void
    this.initializing = new Promise((r) => { done = r })
    try {
      const connection = this.options.connect(this.hostClient(`sdk:${parsed.data.client.name}`, capabilities))
      this.connection = connection
      return await connection.callUnchecked('initialize', params)
    } finally {
      this.initializing = undefined
      done()
    }
  }

  private hostClient(name: string, capabilities: ClientCapabilities): HostClient {
    return {
      name,
      capabilities,
      notify: <N extends NotificationName>(method: N, params: NotificationParams<N>) => {
        if (this.closing) return
        const output = this.options.output as NodeJS.WritableStream & { writableLength?: number }
        if (method === 'session/output' && (output.writableLength ?? 0) > (this.options.outputHighWater ?? 4 * 1024 * 1024)) return
        this.send(rpc.notification(method, params))
      },
      request: <M extends ClientRequestName>(method: M, params: ClientRequestParams<M>, signal: AbortSignal) =>
        this.request(method, params, signal) as Promise<ClientRequestResult<M>>,
    }
  }

  private request(method: ClientRequestName, params: unknown, signal: AbortSignal): Promise<unknown> {
    if (this.closing) return Promise.reject(new DshError('CLIENT_GONE', 'the sdk client went away'))
    if (signal.aborted) return Promise.reject(new DshError('REQUEST_CANCELLED', `${method} is no longer pending`))
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        if (!this.pending.delete(id)) return
        this.send(rpc.notification(CANCEL_REQUEST, { id }))
        reject(new DshError('REQUEST_CANCELLED', `${method} is no longer pending`))
      }
      signal.addEventListener('abort', onAbort, { once: true })
      const settle = <T>(fn: (v: T) => void) => (v: T) => {
        signal.removeEventListener('abort', onAbort)
        fn(v)
      }
      this.pending.set(id, { method, resolve: settle(resolve), reject: settle(reject) })
      this.send(rpc.request(id, method, params))
    })
  }

  private answered(id: rpc.RpcId, value: unknown, error: rpc.RpcErrorObject | undefined): void {
    const pending = typeof id === 'number' ? this.pending.get(id) : undefined
    if (!pending) return this.options.log(`sdk: ignored an answer to unknown request id ${JSON.stringify(id).slice(0, 40)}`)
    this.pending.delete(id as number)
    if (error) return pending.reject(new DshError('CLIENT_REFUSED', `the client answered ${pending.method} with an error: ${error.message.slice(0, 200)}`))
    const checked = CLIENT_REQUESTS[pending.method].result.safeParse(value)
    if (!checked.success) {
      const detail = checked.error.issues.map((i) => `${['result', ...i.path.map(String)].join('.')}: ${i.message}`).join('; ')
      this.options.log(`sdk: invalid answer to ${pending.method} (taken as a refusal): ${detail.slice(0, 300)}`)
      return pending.reject(new DshError('CLIENT_ANSWER_INVALID', `invalid answer to ${pending.method}: ${detail.slice(0, 300)}`))
    }
    pending.resolve(checked.data)
  }
}
