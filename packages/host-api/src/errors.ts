/**
 * JSON-RPC error codes every carrier uses. Host failures keep their stable dsh code in
 * `data.code` (SESSION_NOT_FOUND, SESSION_BUSY, WORKSPACE_INVALID, …) and a hint in
 * `data.hint` when there is one; messages quote at most a short prefix of bad input.
 */
export const RPC_ERRORS = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** A host rule refused the call (data.code says which). */
  HOST_ERROR: -32000,
  /** The session id is not known (data.code SESSION_NOT_FOUND). */
  NOT_FOUND: -32002,
} as const

export interface RpcErrorData {
  code?: string
  hint?: string
  /** For -32602: each zod issue as path + message. */
  issues?: { path: string; message: string }[]
  [key: string]: unknown
}

export interface RpcErrorShape { code: number; message: string; data?: RpcErrorData }

/** Zod issues → the `data.issues` of a -32602 answer (paths joined with dots, root as "params"). */
export function issuesOf(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): { path: string; message: string }[] {
  return error.issues.map((i) => ({ path: ['params', ...i.path.map(String)].join('.'), message: i.message }))
}

/** Quotes at most `max` characters of untrusted input in an error message. */
export function quote(value: unknown, max = 80): string {
  let text: string
  try {
    text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value)
  } catch {
    text = String(value)
  }
  return text.length > max ? `${JSON.stringify(text.slice(0, max))}… (${text.length} chars)` : JSON.stringify(text)
}
