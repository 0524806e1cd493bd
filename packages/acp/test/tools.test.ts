import type * as acp from '@agentclientprotocol/sdk/unstable'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { harness, updatesOf, type Harness } from './harness.js'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

const toolUpdates = (h: Harness, sessionId: string) =>
  updatesOf(h, sessionId).filter((u) => u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update')

const shScript = (args: Record<string, unknown>) => [{ toolCalls: [{ id: 'c1', name: 'sh', arguments: args }] }, { text: 'done' }]

describe('ACP bridge: tool calls', () => {
  it('terminal cards with the capability: terminal content, terminal_info, output and exit in _meta, no text content', async () => {
    h = await harness({ script: shScript({ command: 'make test', description: 'Run the tests', lines: ['one', 'two'], code: 2 }) })
    await h.initialize({ _meta: { terminal_output: true } })
    const { sessionId } = await h.newSession()
    expect(await h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] })).toMatchObject({ stopReason: 'end_turn' })
    const updates = toolUpdates(h, sessionId)
    expect(updates[0]).toEqual({
      sessionUpdate: 'tool_call', toolCallId: 'c1', status: 'pending', title: 'make test', kind: 'execute', locations: [],
      rawInput: { command: 'make test', description: 'Run the tests', lines: ['one', 'two'], code: 2 },
      content: [{ type: 'content', content: { type: 'text', text: 'Run the tests' } }, { type: 'terminal', terminalId: 'dsh-term:c1' }],
      _meta: { terminal_info: { terminal_id: 'dsh-term:c1', cwd: h.cwd } },
    })
    expect(updates[1]).toEqual({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'in_progress' })
    const outputs = updates.filter((u) => (u._meta as { terminal_output?: unknown } | undefined)?.terminal_output)
    expect(outputs.map((u) => (u._meta as { terminal_output: { terminal_id: string; data: string } }).terminal_output.terminal_id)).toEqual(outputs.map(() => 'dsh-term:c1'))
    expect(outputs.map((u) => (u._meta as { terminal_output: { data: string } }).terminal_output.data).join('')).toBe('one\ntwo\n')
    expect(updates.at(-1)).toEqual({
      sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'completed',
      rawOutput: { content: [{ type: 'text', text: 'one\ntwo\n[exit code: 2]' }], isError: false },
      _meta: { terminal_exit: { terminal_id: 'dsh-term:c1', exit_code: 2 } },
    })
    for (const u of updates.slice(1)) expect('content' in u).toBe(false)
  })

  it('without the capability: the description on the call, the output in a console fence on the update', async () => {
    h = await harness({ script: shScript({ command: 'make', description: 'Build', lines: ['ok'] }) })
    await h.initialize()
    const { sessionId } = await h.newSession()
    await h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] })
    const updates = toolUpdates(h, sessionId)
    expect(updates[0]).toEqual({
      sessionUpdate: 'tool_call', toolCallId: 'c1', status: 'pending', title: 'make', kind: 'execute', locations: [],
      rawInput: { command: 'make', description: 'Build', lines: ['ok'] },
      content: [{ type: 'content', content: { type: 'text', text: 'Build' } }],
    })
    expect(JSON.stringify(updates)).not.toContain('terminal')
    expect(updates.at(-1)).toEqual({
      sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'completed',
      rawOutput: { content: [{ type: 'text', text: 'ok' }], isError: false },
      content: [{ type: 'content', content: { type: 'text', text: 'Build' } }, { type: 'content', content: { type: 'text', text: '```console\nok\n```' } }],
    })
  })

  it('diff content and locations for edits, plans from todo_write', async () => {
    h = await harness({
      script: [
        { toolCalls: [{ id: 'e1', name: 'edit', arguments: { path: 'src/a.ts', old: 'a', new: 'b' } }, { id: 't1', name: 'todo_write', arguments: { todos: [{ content: 'Fix it', status: 'in_progress' }, { content: 'Test it', status: 'pending' }] } }] },
        { text: 'ok' },
      ],
    })
    await h.initialize()
    const { sessionId } = await h.newSession()
    await h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] })
    const path = join(h.cwd, 'src/a.ts')
    const all = updatesOf(h, sessionId)
    expect(all.find((u) => u.sessionUpdate === 'tool_call' && u.toolCallId === 'e1')).toEqual({
      sessionUpdate: 'tool_call', toolCallId: 'e1', status: 'pending', title: 'Edit src/a.ts', kind: 'edit',
      content: [{ type: 'diff', path, oldText: 'a', newText: 'b' }], locations: [{ path }], rawInput: { path: 'src/a.ts', old: 'a', new: 'b' },
    })
    expect(all.filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'e1').at(-1)).toEqual({
      sessionUpdate: 'tool_call_update', toolCallId: 'e1', status: 'completed', content: [{ type: 'diff', path, oldText: 'a', newText: 'b' }], locations: [{ path }],
      rawOutput: { content: [{ type: 'text', text: 'edited src/a.ts' }], isError: false },
    })
    expect(all.find((u) => u.sessionUpdate === 'plan')).toEqual({
      sessionUpdate: 'plan', entries: [{ content: 'Fix it', priority: 'medium', status: 'in_progress' }, { content: 'Test it', priority: 'medium', status: 'pending' }],
    })
  })

  it('a failed call ends failed; an unknown tool too', async () => {
    h = await harness({ script: [{ toolCalls: [{ id: 'x1', name: 'nope', arguments: {} }] }, { text: 'ok' }] })
    await h.initialize()
    const { sessionId } = await h.newSession()
    await h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] })
    const updates = toolUpdates(h, sessionId)
    expect(updates.map((u) => [u.sessionUpdate, (u as acp.ToolCallUpdate).status])).toEqual([['tool_call', 'pending'], ['tool_call_update', 'failed']])
  })
})

describe('ACP bridge: permissions', () => {
  const escalate = shScript({ command: 'curl example.com', escalate: true, lines: ['fetched'] })

  it('shows what will run with allow-once / allow-always (scoped) / reject', async () => {
    h = await harness({ script: escalate })
    await h.initialize()
    const { sessionId } = await h.newSession()
    await h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] })
    expect(h.permissions).toEqual([{
      sessionId,
      toolCall: {
        toolCallId: 'c1', title: 'curl example.com', kind: 'execute', status: 'pending', locations: [],
        rawInput: { command: 'curl example.com', escalate: true, lines: ['fetched'], code: 0 },
        content: [{ type: 'content', content: { type: 'text', text: 'Needs to run outside the sandbox: needs the network' } }],
      },
      options: [
        { optionId: 'allow-once', name: 'Allow once', kind: 'allow_once' },
        { optionId: 'allow-always', name: 'Always allow: run `curl example.com` outside the sandbox in this session', kind: 'allow_always' },
        { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
      ],
    }])
    expect(toolUpdates(h, sessionId).at(-1)).toMatchObject({ status: 'completed' })
  })

  it('allow-always covers the same scope for the rest of the session', async () => {
    h = await harness({ script: [...escalate, ...escalate], permission: () => ({ outcome: { outcome: 'selected', optionId: 'allow-always' } }) })
    await h.initialize()
    const { sessionId } = await h.newSession()
    await h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'one' }] })
    await h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'two' }] })
    expect(h.permissions).toHaveLength(1)
    expect(toolUpdates(h, sessionId).filter((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'completed')).toHaveLength(2)
  })

  it('reject and a cancelled request fail the call, not the session', async () => {
    const answers: acp.RequestPermissionResponse[] = [{ outcome: { outcome: 'selected', optionId: 'reject' } }, { outcome: { outcome: 'cancelled' } }]
    h = await harness({ script: [...escalate, ...escalate], permission: () => answers.shift()! })
    await h.initialize()
    const { sessionId } = await h.newSession()
    for (const expected of ['not allowed (reject)', 'not allowed (cancelled)']) {
      const before = h.updates.length
      expect(await h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] })).toMatchObject({ stopReason: 'end_turn' })
      const last = h.updates.slice(before).map((u) => u.update).filter((u) => u.sessionUpdate === 'tool_call_update').at(-1)
      expect(last).toMatchObject({ status: 'failed', rawOutput: { isError: true } })
      expect(JSON.stringify(last)).toContain(expected)
    }
  })
})
