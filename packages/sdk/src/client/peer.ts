import { frame, LineSplitter } from '../framing.js'
import * as rpc from '../jsonrpc.js'
import { abortError, RpcError, TimeoutError } from './errors.js'

export interface CallOptions {
  signal?: AbortSignal | undefined
  /** Rejects with TimeoutError after this long (the server's answer, if any, is ignored). */
  timeoutMs?: number | undefined
}

export interface PeerHandlers {
  /** A server→client request; `signal` aborts when the server sends `$/cancelRequest`. Throw to answer with an error. */
  request(method: string, params: unknown, signal: AbortSignal): Promise<unknown>
  notification(method: string, params: unknown): void
  /** The server sent something that is not JSON-RPC (stdout must carry frames only). */
  protocolError(message: string): void
}

interface Pending { method: string; resolve(value: unknown): void; reject(error: Error): void }

/**
 * The client's end of the NDJSON JSON-RPC connection (transport-neutral: feed it bytes
 * with `push`, it writes frames through `write`). Every call settles exactly once: with
 * the result, an RpcError, a TimeoutError, the abort reason, or `fail`'s error.
 */
export class Peer {
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  private readonly answering = new Map<rpc.RpcId, AbortController>()
  private failure: Error | undefined
  private readonly splitter = new LineSplitter({
    line: (text) => this.onLine(text),
    oversize: (bytes) => this.handlers.protocolError(`a frame of ${bytes} bytes from the server was dropped`),
  })

  constructor(private readonly write: (text: string) => void, private readonly handlers: PeerHandlers) {}

  push(chunk: Buffer): void {
    this.splitter.push(chunk)
  }

  /** Fails every pending and future call with `error` (the transport is gone). */
  fail(error: Error): void {
    if (this.failure) return
    this.splitter.end()
    this.failure = error
    for (const p of this.pending.values()) p.reject(error)
    this.pending.clear()
    for (const c of this.answering.values()) c.abort(error)
    this.answering.clear()
  }

  get failed(): Error | undefined {
    return this.failure
  }

  call(method: string, params: unknown, options: CallOptions = {}): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure)
    const { signal, timeoutMs } = options
    if (signal?.aborted) return Promise.reject(abortError(signal))
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined
      const onAbort = () => done(() => reject(abortError(signal!)))
      const done = (then: () => void) => {
        if (!this.pending.delete(id)) return
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        then()
      }
      this.pending.set(id, {
        method,
        resolve: (v) => done(() => resolve(v)),
        reject: (e) => done(() => reject(e)),
      })
      signal?.addEventListener('abort', onAbort, { once: true })
      if (timeoutMs !== undefined) timer = setTimeout(() => done(() => reject(new TimeoutError(method, timeoutMs))), timeoutMs)
      this.write(frame(rpc.request(id, method, params ?? {})))
    })
  }

  private onLine(text: string): void {
    const message = rpc.parseMessage(text)
    switch (message.kind) {
      case 'parse-error': return this.handlers.protocolError(`the server sent a line that is not JSON: ${text.slice(0, 120)}`)
      case 'invalid': return this.handlers.protocolError(`the server sent an invalid message: ${message.message}`)
      case 'notification':
        if (message.method === '$/cancelRequest') {
          const id = (message.params as { id?: rpc.RpcId } | undefined)?.id
          if (id !== undefined) this.answering.get(id)?.abort(new Error('the server no longer waits for this answer'))
          return
        }
        return this.handlers.notification(message.method, message.params)
      case 'result': return this.settle(message.id, (p) => p.resolve(message.result))
      case 'error':
        if (message.id === null) return this.handlers.protocolError(`the server reported: ${message.error.message}`)
        return this.settle(message.id, (p) => p.reject(new RpcError(p.method, message.error.code, message.error.message, message.error.data as RpcError['data'])))
      case 'request': return void this.answer(message.id, message.method, message.params)
    }
  }

  private settle(id: rpc.RpcId, then: (p: Pending) => void): void {
    const p = typeof id === 'number' ? this.pending.get(id) : undefined
    if (p) then(p)
  }

  private async answer(id: rpc.RpcId, method: string, params: unknown): Promise<void> {
    const controller = new AbortController()
    this.answering.set(id, controller)
    let reply: unknown
    try {
      reply = rpc.result(id, await this.handlers.request(method, params, controller.signal))
    } catch (error) {
      reply = rpc.error(id, { code: -32603, message: error instanceof Error ? error.message : String(error) })
    } finally {
      this.answering.delete(id)
    }
    if (!this.failure && !controller.signal.aborted) this.write(frame(reply))
  }
}
