import { until, useMockModel } from '@dsh/testkit/tree'
import { describe, expect, it } from 'vitest'
import { askTool, hostTree, rejection, TestClient } from './helpers.js'

const model = useMockModel()
const lookup = { name: 'lookup', description: 'Looks a word up in the client\'s dictionary', inputSchema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] } }
const resultOf = (client: TestClient, sessionId: string) =>
  client.of(sessionId).filter((e) => e.type === 'tool/result').map((e) => e.data as { content: { text: string }[]; isError: boolean })

describe('client-defined tools', () => {
  it('are offered to their session only, with the client\'s schema; a call is a tool/call request whose answer is the result', async () => {
    model().setScript([
      { toolCalls: [{ name: 'lookup', arguments: { word: 'harness' } }], expect: { toolsInclude: ['lookup'] } },
      { text: 'found it', expect: { lastToolResultIncludes: 'a set of straps' } },
      { text: 'plain session' },
    ])
    const t = await hostTree(model())
    const { conn, client } = t.connect()
    client.answer = async (method, params) => {
      expect([method, params.tool, params.arguments]).toEqual(['tool/call', 'lookup', { word: 'harness' }])
      return { content: 'a set of straps' }
    }
    const { session } = await conn.call('session/create', { workspace: t.workspace, tools: [lookup] })
    await conn.call('session/prompt', { sessionId: session.id, prompt: 'define harness' })
    expect((await client.turnEnd(session.id)).data).toMatchObject({ reason: 'completed' })
    const header = client.of(session.id).find((e) => e.type === 'request/header')!.data as { tools: { name: string; parameters: unknown }[] }
    expect(header.tools.find((x) => x.name === 'lookup')!.parameters).toEqual(lookup.inputSchema)
    expect(client.violations).toEqual([])
    // the same pipeline: the call is logged before it runs, its result after
    const types = client.of(session.id).map((e) => e.type)
    expect(types.indexOf('tool/call')).toBeLessThan(types.indexOf('tool/result'))
    const other = (await conn.call('session/create', { workspace: t.workspace })).session.id
    await conn.call('session/prompt', { sessionId: other, prompt: 'hi' })
    await client.turnEnd(other)
    const otherHeader = client.of(other).find((e) => e.type === 'request/header')!.data as { tools: { name: string }[] }
    expect(otherHeader.tools.map((x) => x.name)).not.toContain('lookup')
  })

  it('an invalid schema or a name clashing with a built-in is INVALID_PARAMS naming the field, and nothing is created', async () => {
    const t = await hostTree(model(), { tools: [askTool] })
    const { conn } = t.connect()
    const clash = await rejection(conn.call('session/create', { workspace: t.workspace, tools: [{ ...lookup, name: 'ask_me' }] }))
    expect([clash.code, clash.data.issues[0].path]).toEqual(['INVALID_PARAMS', 'params.tools.0.name'])
    const question = await rejection(conn.call('session/create', { workspace: t.workspace, tools: [{ ...lookup, name: 'question' }] }))
    expect(question.data.issues[0].path).toBe('params.tools.0.name')
    const twice = await rejection(conn.call('session/create', { workspace: t.workspace, tools: [lookup, lookup] }))
    expect(twice.data.issues[0].path).toBe('params.tools.1.name')
    const notObject = await rejection(conn.call('session/create', { workspace: t.workspace, tools: [{ ...lookup, inputSchema: { type: 'string' } }] }))
    expect(notObject.data.issues[0].path).toBe('params.tools.0.inputSchema')
    const bogus = await rejection(conn.call('session/create', { workspace: t.workspace, tools: [{ ...lookup, inputSchema: { type: 'object', properties: { a: { type: 'bogus' } } } }] }))
    expect(bogus.data.issues[0].path).toBe('params.tools.0.inputSchema')
    const noCapability = t.connect(new TestClient('plain', { approvals: true, questions: true, tools: false }))
    expect((await rejection(noCapability.conn.call('session/create', { workspace: t.workspace, tools: [lookup] }))).code).toBe('CAPABILITY_MISSING')
    // only buildTree's own session exists: none was created by the refused calls
    expect((await conn.call('session/list', {})).sessions).toHaveLength(1)
  })

  it('a client whose request fails gives the call an error result and the turn goes on', async () => {
    model().setScript([{ toolCalls: [{ name: 'lookup', arguments: { word: 'x' } }] }, { text: 'handled the failure', expect: { lastToolResultIncludes: 'could not run it' } }])
    const t = await hostTree(model())
    const { conn, client } = t.connect()
    client.answer = async () => { throw new Error('transport closed') }
    const { session } = await conn.call('session/create', { workspace: t.workspace, tools: [lookup] })
    await conn.call('session/prompt', { sessionId: session.id, prompt: 'go' })
    expect((await client.turnEnd(session.id)).data).toMatchObject({ reason: 'completed' })
    expect(resultOf(client, session.id)[0]).toMatchObject({ isError: true })
  })

  it('a client that goes away mid-call: the call gets an error result, the turn ends, the session is closed and unlocked (no hang)', async () => {
    model().setScript([{ toolCalls: [{ name: 'lookup', arguments: { word: 'x' } }] }, { text: 'never' }])
    const t = await hostTree(model())
    const { conn, client } = t.connect()
    const { session } = await conn.call('session/create', { workspace: t.workspace, tools: [lookup] })
    await conn.call('session/prompt', { sessionId: session.id, prompt: 'go' })
    await until(() => client.requests.length === 1)
    await conn.close()
    expect(client.requests[0]!.signal.aborted).toBe(true)
    expect(await t.root.sessionStore.isLocked(session.id)).toBe(false)
    const { events } = await t.root.sessions.read(session.id)
    const result = events.find((e) => e.type === 'tool/result')!.data as { isError: boolean }
    expect(result.isError).toBe(true)
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
    expect(t.root.tools.get('lookup', session.id)).toBeUndefined()
  })
})
