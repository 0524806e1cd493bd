import { useMockModel } from '@dsh/testkit/tree'
import { describe, expect, it } from 'vitest'
import { askTool, hostTree, rejection, TestClient } from './helpers.js'

const model = useMockModel()
const askCall = (what: string) => ({ toolCalls: [{ name: 'ask_me', arguments: { what } }] })
const resultOf = (client: TestClient, sessionId: string) =>
  client.of(sessionId).filter((e) => e.type === 'tool/result').map((e) => (e.data as { content: { text: string }[] }).content[0]!.text)

describe('answerers per owner', () => {
  it('routes each session\'s approvals to its own owner: two surfaces in one tree do not overwrite each other', async () => {
    model().setScript([askCall('a'), { text: 'done a' }, askCall('b'), { text: 'done b' }])
    const t = await hostTree(model(), { tools: [askTool] })
    const a = t.connect(new TestClient('a'))
    const b = t.connect(new TestClient('b'))
    a.client.answer = async () => ({ decision: 'allow-once' })
    b.client.answer = async () => ({ decision: 'reject' })
    const sa = (await a.conn.call('session/create', { workspace: t.workspace })).session.id
    const sb = (await b.conn.call('session/create', { workspace: t.workspace })).session.id
    await a.conn.call('session/prompt', { sessionId: sa, prompt: 'go a' })
    await a.client.turnEnd(sa)
    await b.conn.call('session/prompt', { sessionId: sb, prompt: 'go b' })
    await b.client.turnEnd(sb)
    expect(a.client.requests.map((r) => [r.method, r.params.sessionId])).toEqual([['approval/request', sa]])
    expect(b.client.requests.map((r) => [r.method, r.params.sessionId])).toEqual([['approval/request', sb]])
    expect(resultOf(a.client, sa)).toEqual(['outcome: allow-once'])
    expect(resultOf(b.client, sb)).toEqual(['outcome: reject'])
    expect([...a.client.violations, ...b.client.violations]).toEqual([])
    // the pending question is a session event, so a reconnecting client sees it in the log
    expect(a.client.of(sa).map((e) => e.type)).toEqual(expect.arrayContaining(['approval/request', 'approval/decision']))
  })

  it('a client without the approvals capability gets no request: the call is denied with the reason (the headless rule)', async () => {
    model().setScript([askCall('x'), { text: 'ok' }])
    const t = await hostTree(model(), { tools: [askTool] })
    // a process-wide answerer (an old surface) must not answer for a session whose owner declared none
    t.root.approval.setAnswerer(async () => 'allow-once')
    const { conn, client } = t.connect(new TestClient('headless', { approvals: false, questions: false, tools: false }))
    const { session } = await conn.call('session/create', { workspace: t.workspace })
    await conn.call('session/prompt', { sessionId: session.id, prompt: 'go' })
    await client.turnEnd(session.id)
    expect(client.requests).toEqual([])
    expect(resultOf(client, session.id)).toEqual(['outcome: reject'])
    const decision = client.of(session.id).find((e) => e.type === 'approval/decision')!
    expect((decision.data as { reason: string }).reason).toMatch(/no one can answer/)
  })

  it('shows waiting while a request is pending; session/respond from the owner answers it; a stale or foreign answer is refused', async () => {
    model().setScript([askCall('y'), { text: 'ok' }])
    const t = await hostTree(model(), { tools: [askTool] })
    const { conn, client } = t.connect()
    const { session } = await conn.call('session/create', { workspace: t.workspace })
    await conn.call('session/prompt', { sessionId: session.id, prompt: 'go' })
    await client.status(session.id, 'waiting')
    const { requestId } = client.requests[0]!.params as { requestId: string }
    const stranger = t.root.host.connect(new TestClient('stranger'))
    const foreign = await rejection(stranger.call('session/respond', { sessionId: session.id, requestId, result: { decision: 'allow-once' } }))
    expect(foreign.code).toBe('NOT_OWNER')
    await conn.call('session/respond', { sessionId: session.id, requestId, result: { decision: 'allow-session' } })
    await client.turnEnd(session.id)
    expect(resultOf(client, session.id)).toEqual(['outcome: allow-always'])
    const stale = await rejection(conn.call('session/respond', { sessionId: session.id, requestId, result: { decision: 'reject' } }))
    expect(stale.code).toBe('REQUEST_NOT_PENDING')
    await client.status(session.id, 'idle')
    expect(client.statuses.map((s) => s.status)).toEqual(['running', 'waiting', 'running', 'idle'])
  })

  it('a subagent\'s approval goes to the owner of its parent session', async () => {
    const t = await hostTree(model())
    const { conn, client } = t.connect()
    client.answer = async () => ({ decision: 'allow-once' })
    const { session } = await conn.call('session/create', { workspace: t.workspace })
    const child = await t.root.sessions.create({ cwd: t.workspace, parent: { id: session.id, callId: 'call_1' } })
    const outcome = await t.root.approval.request(child, { kind: 'tool', tool: 'bash', title: 'rm -rf build' }, new AbortController().signal)
    expect(outcome).toBe('allow-once')
    expect(client.requests.map((r) => r.params.sessionId)).toEqual([session.id])
    await child.close()
  })

  it('cancel withdraws a pending approval (its signal aborts) and the turn ends aborted', async () => {
    model().setScript([askCall('z'), { text: 'never' }])
    const t = await hostTree(model(), { tools: [askTool] })
    const { conn, client } = t.connect()
    const { session } = await conn.call('session/create', { workspace: t.workspace })
    await conn.call('session/prompt', { sessionId: session.id, prompt: 'go' })
    await client.status(session.id, 'waiting')
    expect(await conn.call('session/cancel', { sessionId: session.id })).toEqual({ cancelled: true })
    const end = await client.turnEnd(session.id)
    expect(end.data).toMatchObject({ reason: 'aborted' })
    expect(client.requests[0]!.signal.aborted).toBe(true)
    expect(client.of(session.id).find((e) => e.type === 'approval/decision')!.data).toMatchObject({ outcome: 'cancelled' })
  })
})

describe('the question tool', () => {
  const ask = { toolCalls: [{ name: 'question', arguments: { questions: [{ question: 'Which database?', options: [{ label: 'Postgres' }, { label: 'SQLite' }], allowFreeText: true }] } }] }

  it('asks the owner, logs question/request and question/answer, and returns the answer as the tool result', async () => {
    model().setScript([{ ...ask, expect: { toolsInclude: ['question'] } }, { text: 'using sqlite', expect: { lastToolResultIncludes: 'SQLite' } }])
    const t = await hostTree(model())
    const { conn, client } = t.connect()
    client.answer = async (method, params) => {
      expect(method).toBe('question/request')
      return { answers: [{ id: params.questions[0].id, selected: [params.questions[0].options[1].id], text: 'the small one' }] }
    }
    const { session } = await conn.call('session/create', { workspace: t.workspace })
    await conn.call('session/prompt', { sessionId: session.id, prompt: 'pick' })
    expect((await client.turnEnd(session.id)).data).toMatchObject({ reason: 'completed' })
    const types = client.of(session.id).map((e) => e.type)
    expect(types).toEqual(expect.arrayContaining(['question/request', 'question/answer']))
    expect(resultOf(client, session.id)[0]).toContain('SQLite, "the small one"')
  })

  it('is not offered to a session whose owner cannot answer questions', async () => {
    model().setScript([{ text: 'no question tool', expect: { toolsInclude: ['ask_me'] } }])
    const t = await hostTree(model(), { tools: [askTool] })
    const { conn, client } = t.connect(new TestClient('headless', { approvals: false, questions: false, tools: false }))
    const { session } = await conn.call('session/create', { workspace: t.workspace })
    await conn.call('session/prompt', { sessionId: session.id, prompt: 'hi' })
    await client.turnEnd(session.id)
    const header = client.of(session.id).find((e) => e.type === 'request/header')!.data as { tools: { name: string }[] }
    expect(header.tools.map((x) => x.name)).not.toContain('question')
  })

  it('an invalid answer becomes an error result the model reads, not a hang', async () => {
    model().setScript([ask, { text: 'ok' }])
    const t = await hostTree(model())
    const { conn, client } = t.connect()
    client.answer = async () => ({ answers: [{ id: 'q9', selected: [] }] })
    const { session } = await conn.call('session/create', { workspace: t.workspace })
    await conn.call('session/prompt', { sessionId: session.id, prompt: 'pick' })
    await client.turnEnd(session.id)
    expect(resultOf(client, session.id)[0]).toMatch(/did not answer .*unknown question/)
  })
})
