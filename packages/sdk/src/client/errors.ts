/** Errors of the TypeScript client. Each carries what a program needs to react without parsing messages. */

/** The server answered a call with a JSON-RPC error. `data.code` is the stable dsh code (SESSION_NOT_FOUND, INVALID_PARAMS, …). */
export class RpcError extends Error {
  override name = 'RpcError'
  constructor(readonly method: string, readonly code: number, message: string, readonly data?: { code?: string; hint?: string; issues?: { path: string; message: string }[]; [key: string]: unknown }) {
    super(`${method}: ${message}`)
  }
}

/** The server process is gone (or its stdio broke). `exitCode`/`signal` say how it ended; `stderrTail` holds its last stderr lines. */
export class TransportClosedError extends Error {
  override name = 'TransportClosedError'
  constructor(message: string, readonly exitCode: number | null, readonly signal: string | null, readonly stderrTail: string) {
    super(stderrTail ? `${message}\n--- last lines of the server's stderr ---\n${stderrTail}` : message)
  }
}

/** A call (or the start, or close) took longer than its `timeoutMs`. */
export class TimeoutError extends Error {
  override name = 'TimeoutError'
  constructor(readonly what: string, readonly timeoutMs: number) {
    super(`${what} took longer than ${timeoutMs} ms`)
  }
}

export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason
  if (reason instanceof Error) return reason
  return Object.assign(new Error(reason === undefined ? 'aborted' : String(reason)), { name: 'AbortError' })
}
