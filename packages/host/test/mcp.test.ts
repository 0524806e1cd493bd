import { Service, type Context } from '@deepseek-ai/cordis'
import { useMockModel } from '@dsh/testkit/tree'
import { describe, expect, it } from 'vitest'
import { hostTree, rejection } from './helpers.js'

const model = useMockModel()

/** Records what the host asks of `ctx.mcp` (the real client is tested in @dsh/mcp). */
class FakeMcp extends Service {
  readonly calls: string[] = []
  constructor(ctx: Context, private readonly failing: string | undefined) {
    super(ctx, 'mcp')
  }
  async mount(name: string, spec: { command?: string }, options: { sessionId: string }): Promise<void> {
    this.calls.push(`mount ${name} ${spec.command ?? ''} ${options.sessionId}`)
    if (name === this.failing) throw new Error(`server ${name} did not start`)
  }
  async unmount(name: string, options: { sessionId: string }): Promise<void> {
    this.calls.push(`unmount ${name} ${options.sessionId}`)
  }
}

const fakeMcp = (failing?: string) => ({ name: 'fake-mcp', apply: (ctx: Context) => { new FakeMcp(ctx, failing) } })

describe('per-session MCP servers', () => {
  it('are mounted for the session being created and unmounted when it is released', async () => {
    const t = await hostTree(model(), { plugins: [[fakeMcp()]] })
    const { conn } = t.connect()
    const { session } = await conn.call('session/create', { workspace: t.workspace, mcpServers: { files: { type: 'stdio', command: 'mcp-files' } } })
    const mcp = t.root.get('mcp') as unknown as FakeMcp
    expect(mcp.calls).toEqual([`mount files mcp-files ${session.id}`])
    await conn.call('session/close', { sessionId: session.id })
    expect(mcp.calls).toEqual([`mount files mcp-files ${session.id}`, `unmount files ${session.id}`])
  })

  it('a server that fails to start fails the create, and the session is closed again', async () => {
    const t = await hostTree(model(), { plugins: [[fakeMcp('broken')]] })
    const { conn } = t.connect()
    const error = await rejection(conn.call('session/create', { workspace: t.workspace, mcpServers: { broken: { type: 'stdio', command: 'nope' } } }))
    expect(error.message).toContain('server broken did not start')
    expect([...t.root.host.core.hosted.keys()]).toEqual([])
  })

  it('without an MCP client row, mcpServers is MCP_UNAVAILABLE before anything exists', async () => {
    const t = await hostTree(model())
    const { conn } = t.connect()
    const error = await rejection(conn.call('session/create', { workspace: t.workspace, mcpServers: { x: { type: 'stdio', command: 'x' } } }))
    expect(error.code).toBe('MCP_UNAVAILABLE')
  })
})
