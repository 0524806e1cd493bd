import { Service, type Context } from '@deepseek-ai/cordis'
import type { Session } from '@dsh/core'
import { useMockModel } from '@dsh/testkit/tree'
import { describe, expect, it } from 'vitest'
import { hostTree, rejection } from './helpers.js'

const model = useMockModel()

/** Stands in for @dsh/world-ssh's `ctx.worlds` seam (spec → remote root → enter logs world/select). */
class FakeWorlds extends Service {
  readonly entered: string[] = []
  constructor(ctx: Context) {
    super(ctx, 'worlds')
  }
  spec(flags: { url?: string }, _settings: unknown, _cwd: string): { url: string } | undefined {
    return flags.url ? { url: flags.url } : undefined
  }
  workspace(spec: { url: string }): string {
    return new URL(spec.url).pathname
  }
  async enter(session: Session, spec: { url: string } | undefined): Promise<void> {
    this.entered.push(`${session.id} ${spec?.url ?? '(logged)'}`)
    if (spec) session.append('world/select', { url: spec.url, identity: '/k', knownHosts: '/h' })
  }
}

const fakeWorlds = { name: 'fake-worlds', inject: ['sessions'], apply: (ctx: Context) => { ctx.sessions.defineEventType('world/select'); new FakeWorlds(ctx) } }

describe('remote worlds through the host', () => {
  it('session/create {world}: the workspace is the world\'s root (not checked locally); opening re-enters the logged world', async () => {
    const t = await hostTree(model(), { plugins: [[fakeWorlds]] })
    const { conn } = t.connect()
    const { session } = await conn.call('session/create', { workspace: t.workspace, world: { url: 'ssh://dev@127.0.0.1:2222/srv/remote-only' } })
    expect(session.workspace).toBe('/srv/remote-only')
    await conn.call('session/close', { sessionId: session.id })
    const reopened = await conn.call('session/open', { sessionId: session.id })
    expect(reopened.session.workspace).toBe('/srv/remote-only')
    const worlds = t.root.get('worlds') as unknown as FakeWorlds
    expect(worlds.entered).toEqual([`${session.id} ssh://dev@127.0.0.1:2222/srv/remote-only`, `${session.id} (logged)`])
  })

  it('without the worlds row, a world is WORLD_UNSUPPORTED before anything exists', async () => {
    const t = await hostTree(model())
    const { conn } = t.connect()
    const error = await rejection(conn.call('session/create', { workspace: t.workspace, world: { url: 'ssh://a@b/c' } }))
    expect(error.code).toBe('WORLD_UNSUPPORTED')
  })
})
