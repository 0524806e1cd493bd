// What the ACP surface needed of the host when it moved onto it (issue 9 item 7), each
// failing before: a subagent's question is shown on the owner's `task` call, a client's
// own cancel of one question is `cancelled` (not `reject`), the `question` tool obeys an
// agent preset's tool set, and list pages stay disjoint while a listed session is open.
import { useMockModel } from '@dsh/testkit/tree'
import { DshError } from '@dsh/protocol'
import { describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { tempDir } from '@dsh/testkit/tree'
import { askTool, hostTree, TestClient } from './helpers.js'

const model = useMockModel()

describe('the host, for surfaces like ACP', () => {
  it('a subagent\'s approval names the owner-side task call it runs under', async () => {
    const t = await hostTree(model())
    const { conn, client } = t.connect()
    client.answer = async () => ({ decision: 'allow-once' })
    const { session } = await conn.call('session/create', { workspace: t.workspace })
    const child = await t.root.sessions.create({ cwd: t.workspace, parent: { id: session.id, callId: 'task_1' } })
    const grandchild = await t.root.sessions.create({ cwd: t.workspace, parent: { id: child.id, callId: 'task_2' } })
    await t.root.approval.request(grandchild, { kind: 'tool', tool: 'bash', title: 'rm -rf build', callId: 'bash_9' }, new AbortController().signal)
    expect(client.requests.map((r) => [r.params.sessionId, r.params.toolCallId])).toEqual([[session.id, 'task_1']])
    // the owner's own calls keep their id
    await t.root.approval.request(t.root.sessions.get(session.id)!, { kind: 'tool', tool: 'bash', title: 'ls', callId: 'own_1' }, new AbortController().signal)
    expect(client.requests.at(-1)!.params.toolCallId).toBe('own_1')
    await grandchild.close()
    await child.close()
  })

  it('a client rejecting an approval with CANCELLED cancels that call (outcome cancelled); another error is reject', async () => {
    model().setScript([{ toolCalls: [{ name: 'ask_me', arguments: { what: 'a' } }] }, { toolCalls: [{ name: 'ask_me', arguments: { what: 'b' } }] }, { text: 'done' }])
    const t = await hostTree(model(), { tools: [askTool] })
    const { conn, client } = t.connect()
    const answers = [new DshError('CANCELLED', 'the editor closed the dialog'), new Error('the client broke')]
    client.answer = async () => { throw answers.shift()! }
    const { session } = await conn.call('session/create', { workspace: t.workspace })
    await conn.call('session/prompt', { sessionId: session.id, prompt: 'go' })
    expect((await client.turnEnd(session.id)).data).toMatchObject({ reason: 'completed' })
    const results = client.of(session.id).filter((e) => e.type === 'tool/result').map((e) => (e.data as { content: { text: string }[] }).content[0]!.text)
    expect(results).toEqual(['outcome: cancelled', 'outcome: reject'])
  })

  it('the question tool follows the agent preset\'s tool set; without a preset list it is offered', async () => {
    model().setScript([{ text: 'one' }, { text: 'two' }])
    const t = await hostTree(model())
    const { conn, client } = t.connect(new TestClient('asks', { approvals: true, questions: true, tools: false }))
    const tools = (i: number) => ((model().requests[i]!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((x) => x.function.name)
    const minimal = (await conn.call('session/create', { workspace: t.workspace, agentPreset: 'minimal' })).session.id
    await conn.call('session/prompt', { sessionId: minimal, prompt: 'hi' })
    await client.turnEnd(minimal)
    const standard = (await conn.call('session/create', { workspace: t.workspace })).session.id
    await conn.call('session/prompt', { sessionId: standard, prompt: 'hi' })
    await client.turnEnd(standard)
    expect(tools(0)).not.toContain('question')
    expect(tools(1)).toContain('question')
  })

  it('list pages are disjoint and complete while a listed session is open (its summary is newer than its stored line)', async () => {
    model().setScript([{ text: 'a' }, { text: 'b' }, { text: 'c' }])
    const t = await hostTree(model(), { store: { dir: join(tempDir('dsh-store-'), 'sessions') } })
    const { conn, client } = t.connect()
    const ids: string[] = []
    for (const text of ['one', 'two', 'three']) {
      const id = (await conn.call('session/create', { workspace: t.workspace })).session.id
      await conn.call('session/prompt', { sessionId: id, prompt: text })
      await client.turnEnd(id)
      ids.push(id)
    }
    const seen: string[] = []
    let cursor: string | undefined
    for (let page = 0; page < 5; page++) {
      const result = await conn.call('session/list', { workspace: t.workspace, limit: 1, ...(cursor ? { cursor } : {}) })
      seen.push(...result.sessions.map((s) => s.id))
      if (!result.nextCursor) break
      cursor = result.nextCursor
    }
    expect(seen.sort()).toEqual([...ids].sort())
  })
})
