import { METHODS, issuesOf } from '@dsh/host-api'
import type { HostClient, HostConnection } from '@dsh/host'
import { DshError } from '@dsh/protocol'

/**
 * A stand-in for the host's connection, for the gateway's HTTP tests only (the fence and
 * the wire shapes do not depend on what a session does). It validates params against the
 * real method table and serves one stored session `s1` with events 0..5.
 */
export function fakeHost() {
  const calls: { method: string; params: unknown }[] = []
  let client: HostClient | undefined
  const events = Array.from({ length: 6 }, (_, seq) => ({ event: { type: 'notice', seq, time: 1000 + seq, data: { level: 'info', message: `event ${seq}` } }, view: null }))
  const connection: HostConnection = {
    id: 'fake',
    call: (m, p) => connection.callUnchecked(m, p) as never,
    async callUnchecked(method, params) {
      calls.push({ method, params })
      const def = METHODS[method as keyof typeof METHODS]
      if (!def) throw new DshError('METHOD_NOT_FOUND', `unknown method ${method}`)
      const parsed = def.params.safeParse(params)
      if (!parsed.success) throw new DshError('INVALID_PARAMS', `invalid params for ${method}`, { data: { issues: issuesOf(parsed.error) } })
      const p = parsed.data as { sessionId?: string; afterSeq?: number; limit?: number }
      if (p.sessionId !== undefined && p.sessionId !== 's1') throw new DshError('SESSION_NOT_FOUND', `no session ${p.sessionId}`)
      switch (method) {
        case 'session/get': case 'session/open':
          return { session: { id: 's1', workspace: '/tmp', title: 't', created: 1, updatedAt: 1, events: events.length, status: 'idle', archived: false, parent: null, open: true, lastSeq: events.length - 1, config: { provider: 'deepseek', model: 'm', reasoningEffort: null, permissionMode: 'workspace-write', agentPreset: null } } }
        case 'session/history': {
          const after = p.afterSeq ?? -1
          const items = events.filter((e) => e.event.seq > after).slice(0, p.limit ?? 200)
          return { items, lastSeq: events.length - 1, hasMore: (items.at(-1)?.event.seq ?? events.length - 1) < events.length - 1 }
        }
        case 'credentials/describe': return { providers: [{ provider: 'deepseek', configured: true, source: 'store', envVar: 'DEEPSEEK_API_KEY' }] }
        default: return {}
      }
    },
    async close() { /* nothing held */ },
  }
  return {
    calls, events, connection,
    connect(c: HostClient) { client = c; return connection },
    get client() { return client! },
    /** Appends a durable event and notifies like the host does. */
    append(message: string) {
      const seq = events.length
      const item = { event: { type: 'notice', seq, time: 1000 + seq, data: { level: 'info', message } }, view: null }
      events.push(item)
      client!.notify('session/event', { sessionId: 's1', ...item })
    },
  }
}
