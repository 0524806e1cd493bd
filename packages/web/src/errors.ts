import { RPC_ERRORS, type RpcErrorShape } from '@dsh/host-api'
import { isDshError } from '@dsh/protocol'

/** A thrown error → the `{error}` of a gateway answer and its HTTP status. Never a stack. */
export function toRpcError(error: unknown): { status: number; error: RpcErrorShape } {
  if (isDshError(error)) {
    const data = { ...(error.data ?? {}), code: error.code, ...(error.hint ? { hint: error.hint } : {}) }
    const code = error.code === 'INVALID_PARAMS' ? RPC_ERRORS.INVALID_PARAMS
      : error.code === 'METHOD_NOT_FOUND' ? RPC_ERRORS.METHOD_NOT_FOUND
        : error.code === 'PARSE_ERROR' ? RPC_ERRORS.PARSE_ERROR
          : error.code === 'SESSION_NOT_FOUND' ? RPC_ERRORS.NOT_FOUND
            : RPC_ERRORS.HOST_ERROR
    return { status: statusOf(code), error: { code, message: error.message, data } }
  }
  const message = error instanceof Error ? error.message : String(error)
  return { status: 500, error: { code: RPC_ERRORS.INTERNAL_ERROR, message: `internal error: ${message}`, data: { code: 'INTERNAL' } } }
}

export function rpcError(code: number, message: string, data?: RpcErrorShape['data']): { status: number; error: RpcErrorShape } {
  return { status: statusOf(code), error: { code, message, ...(data ? { data } : {}) } }
}

function statusOf(code: number): number {
  switch (code) {
    case RPC_ERRORS.PARSE_ERROR: case RPC_ERRORS.INVALID_PARAMS: case RPC_ERRORS.INVALID_REQUEST: return 400
    case RPC_ERRORS.METHOD_NOT_FOUND: case RPC_ERRORS.NOT_FOUND: return 404
    case RPC_ERRORS.HOST_ERROR: return 409
    default: return 500
  }
}
