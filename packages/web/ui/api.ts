import type { MethodName, ParamsOf, ResultOf, RpcErrorShape } from '@dsh/host-api'
import { authToken } from './auth.js'

/** A `{error}` answer of the gateway. */
export class RpcError extends Error {
  constructor(readonly status: number, readonly rpc: RpcErrorShape) {
    super(rpc.message)
  }
  get dshCode(): string | undefined {
    return typeof this.rpc.data?.code === 'string' ? this.rpc.data.code : undefined
  }
}

/** Same-origin POST with the launch token as a bearer; the body is always JSON. */
export async function post<T>(path: string, params: unknown): Promise<T> {
  let res: Response
  try {
    res = await fetch(`/api/${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${authToken()}` }, body: JSON.stringify(params), credentials: 'omit' })
  } catch {
    throw new RpcError(0, { code: -32603, message: 'the dsh web server cannot be reached', data: { code: 'OFFLINE' } })
  }
  const body = await res.json().catch(() => null) as { result?: T; error?: RpcErrorShape } | null
  if (!body || body.error || !('result' in body)) throw new RpcError(res.status, body?.error ?? { code: -32603, message: `unexpected answer (HTTP ${res.status})` })
  return body.result as T
}

export function call<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
  return post<ResultOf<M>>(method, params)
}

export interface DirListing { path: string; parent: string | null; entries: { name: string; path: string }[] }
export const listDir = (path?: string) => post<DirListing>('fs/list', path ? { path } : {})
export const makeDir = (path: string) => post<{ path: string }>('fs/mkdir', { path })
export const respond = (sessionId: string, requestId: string, result: unknown) => post<object>('respond', { sessionId, requestId, result })

export function errorText(error: unknown): string {
  if (error instanceof RpcError) return error.dshCode ? `${error.dshCode}: ${error.message}` : error.message
  return error instanceof Error ? error.message : String(error)
}
