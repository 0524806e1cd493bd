/**
 * JSON-RPC 2.0 messages as both ends of `dsh sdk` read them (pure). `parseMessage`
 * never throws: a line that is not JSON is `parse-error`, a value that is not a
 * JSON-RPC message is `invalid` (with the id when one could be read, else null).
 */
export type RpcId = string | number

export interface RpcErrorObject { code: number; message: string; data?: unknown }

export type Incoming =
  | { kind: 'request'; id: RpcId; method: string; params: unknown }
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'result'; id: RpcId; result: unknown }
  | { kind: 'error'; id: RpcId | null; error: RpcErrorObject }
  | { kind: 'parse-error'; message: string }
  | { kind: 'invalid'; id: RpcId | null; message: string }

const isId = (v: unknown): v is RpcId => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))

export function parseMessage(line: string): Incoming {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (error) {
    return { kind: 'parse-error', message: error instanceof Error ? error.message : String(error) }
  }
  return classify(value)
}

export function classify(value: unknown): Incoming {
  if (Array.isArray(value)) return { kind: 'invalid', id: null, message: 'batches are not supported: send one message per line' }
  if (typeof value !== 'object' || value === null) return { kind: 'invalid', id: null, message: 'a message must be a JSON object' }
  const m = value as Record<string, unknown>
  const hasId = Object.hasOwn(m, 'id')
  const id = hasId && isId(m.id) ? m.id : null
  if (m.jsonrpc !== '2.0') return { kind: 'invalid', id, message: 'jsonrpc must be "2.0"' }
  if (Object.hasOwn(m, 'method')) {
    if (typeof m.method !== 'string' || m.method === '') return { kind: 'invalid', id, message: 'method must be a non-empty string' }
    const params = Object.hasOwn(m, 'params') ? m.params : undefined
    if (params !== undefined && (typeof params !== 'object' || params === null)) return { kind: 'invalid', id, message: 'params must be an object or an array' }
    if (!hasId) return { kind: 'notification', method: m.method, params }
    if (id === null) return { kind: 'invalid', id: null, message: 'id must be a string or a number' }
    return { kind: 'request', id, method: m.method, params }
  }
  if (Object.hasOwn(m, 'result') && id !== null) return { kind: 'result', id, result: m.result }
  if (Object.hasOwn(m, 'error')) {
    const e = m.error as Record<string, unknown> | null
    if (typeof e === 'object' && e !== null && typeof e.code === 'number' && typeof e.message === 'string') {
      return { kind: 'error', id: hasId && (m.id === null || isId(m.id)) ? m.id as RpcId | null : null, error: { code: e.code, message: e.message, ...(Object.hasOwn(e, 'data') ? { data: e.data } : {}) } }
    }
  }
  return { kind: 'invalid', id, message: 'neither a request, a notification nor a response' }
}

export const request = (id: RpcId, method: string, params: unknown) => ({ jsonrpc: '2.0' as const, id, method, params })
export const notification = (method: string, params: unknown) => ({ jsonrpc: '2.0' as const, method, params })
export const result = (id: RpcId, value: unknown) => ({ jsonrpc: '2.0' as const, id, result: value })
export const error = (id: RpcId | null, e: RpcErrorObject) => ({ jsonrpc: '2.0' as const, id, error: e })
