// A stand-in for ctx.host that keeps the contract of HostConnection: params validated
// against the table (INVALID_PARAMS with data.issues), a few operations answered, and
// the connected HostClient exposed so tests can play the host's side.
import { issuesOf, METHODS, PROTOCOL_VERSION } from '@dsh/host-api'
import type { HostClient, HostConnection } from '@dsh/host'
import { DshError } from '@dsh/protocol'

export interface FakeHost {
  connect(client: HostClient): HostConnection
  client(): HostClient
  calls: { method: string; params: unknown }[]
  closed: number
}

export type FakeHandler = (params: any, client: HostClient) => unknown

export function fakeHost(handlers: Record<string, FakeHandler> = {}): FakeHost {
  let connected: HostClient | undefined
  const host: FakeHost = {
    calls: [],
    closed: 0,
    client: () => {
      if (!connected) throw new Error('not connected')
      return connected
    },
    connect(client) {
      connected = client
      const callUnchecked = async (method: string, params: unknown): Promise<unknown> => {
        const def = METHODS[method as keyof typeof METHODS]
        const parsed = def.params.safeParse(params)
        if (!parsed.success) throw new DshError('INVALID_PARAMS', `invalid params for ${method}`, { data: { issues: issuesOf(parsed.error) } })
        host.calls.push({ method, params: parsed.data })
        const handler = handlers[method]
        if (handler) return handler(parsed.data, client)
        switch (method) {
          case 'initialize': return { protocolVersion: PROTOCOL_VERSION, server: { name: 'dsh', version: '0.0.0' }, capabilities: { ...client.capabilities, mcp: true, worlds: ['local'] } }
          case 'session/command': return { name: 'echo', reply: (parsed.data as { line: string }).line, startedTurn: false, newSessionId: null }
          case 'session/get': throw new DshError('SESSION_NOT_FOUND', 'no session "x"')
          case 'session/cancel': return { cancelled: false }
          default: return {}
        }
      }
      return {
        id: 'c1',
        call: (method, params) => callUnchecked(method, params) as never,
        callUnchecked,
        close: async () => { host.closed++ },
      }
    },
  }
  return host
}
