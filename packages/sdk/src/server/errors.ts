import { RPC_ERRORS, quote, type RpcErrorShape } from '@dsh/host-api'
import { isDshError } from '@dsh/protocol'

/** Host failures → JSON-RPC errors. The stable dsh code stays in `data.code`; nothing else of the error leaves. */
export function toRpcError(error: unknown): RpcErrorShape {
  if (isDshError(error)) {
    const data: Record<string, unknown> = { code: error.code }
    if (error.hint) data.hint = error.hint
    const issues = error.data?.issues
    if (error.code === 'INVALID_PARAMS') {
      if (Array.isArray(issues)) data.issues = issues
      return { code: RPC_ERRORS.INVALID_PARAMS, message: error.message, data }
    }
    if (error.code === 'INVALID_REQUEST') return { code: RPC_ERRORS.INVALID_REQUEST, message: error.message, data }
    if (error.code === 'METHOD_NOT_FOUND') return { code: RPC_ERRORS.METHOD_NOT_FOUND, message: error.message, data }
    if (error.code === 'SESSION_NOT_FOUND') return { code: RPC_ERRORS.NOT_FOUND, message: error.message, data }
    return { code: RPC_ERRORS.HOST_ERROR, message: error.message, data }
  }
  const message = error instanceof Error ? error.message : String(error)
  return { code: RPC_ERRORS.INTERNAL_ERROR, message: `internal error: ${message}`, data: { code: 'INTERNAL' } }
}

export const methodNotFound = (method: string): RpcErrorShape =>
  ({ code: RPC_ERRORS.METHOD_NOT_FOUND, message: `unknown method ${quote(method)}`, data: { code: 'METHOD_NOT_FOUND', hint: 'rpc/describe lists every method' } })

export const invalidRequest = (message: string): RpcErrorShape =>
  ({ code: RPC_ERRORS.INVALID_REQUEST, message, data: { code: 'INVALID_REQUEST' } })

/**
 * -32700 for a line that is not JSON. Neither the line nor the parser's message (V8 quotes
 * the text around the error) is echoed: a broken `credentials/set` frame must not come back
 * with its key in it. Only the position and the line's length are said.
 */
export function parseError(detail: string, line: string): RpcErrorShape {
  const position = /position (\d+)/.exec(detail)?.[1]
  const where = position === undefined ? '' : ` at character ${position}`
  return { code: RPC_ERRORS.PARSE_ERROR, message: `not JSON${where} (a line of ${line.length} characters)`, data: { code: 'PARSE_ERROR' } }
}
