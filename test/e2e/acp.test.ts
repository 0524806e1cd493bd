// Conformance of `dsh --profile acp` (built) driven by the official ACP SDK client over
// stdio against the scripted mock model: prompt turns, terminal cards and their console
// fallback, permission requests, cancel races, robustness. Sessions: acp-sessions.test.ts.
import { type Script } from '@dsh/testkit'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir } from './helpers/dsh.js'
import { type AcpProcess, processesWith, rpcError, sessionUpdates, until, useAcpSuite } from './helpers/acp.js'

const suite = useAcpSuite()

async function session(p: AcpProcess, caps: Parameters<AcpProcess['initialize']>[0] = {}): Promise<string> {
  await p.initialize(caps)
  return (await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [] })).sessionId
}

const ask = (p: AcpProcess, sessionId: string, text: string) => p.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })
const tools = (p: AcpProcess, sessionId: string) => sessionUpdates(p, sessionId).filter((u) => u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update')
type Meta = { terminal_output?: { terminal_id: string; data: string }; terminal_exit?: Record<string, unknown> }
const metaOf = (u: object) => ((u as { _meta?: Meta })._meta ?? {})

describe('dsh --profile acp: initialize and prompt turns', () => {
  it('initialize is honest; text streams with a stable message id; stdout carries frames only', async () => {
    const p = suite.start([{ reasoning: 'thinking it over', text: 'Hello from the mock model', chunkSize: 4 }])
    const init = await p.initialize({ auth: { terminal: true }, elicitation: { url: {} } })
    expect(init.agentInfo).toMatchObject({ name: 'dsh' })
    expect(init.agentCapabilities?.loadSession).toBe(true)
    expect(init.agentCapabilities?._meta).toMatchObject({ dsh: { runtime: { version: expect.any(String) } }, steering: { supported: true } })
    expect(init.authMethods?.map((m) => m.id)).toEqual(['api-key', 'terminal', 'browser'])
    const { sessionId } = await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [] })
    expect(await ask(p, sessionId, 'hello')).toMatchObject({ stopReason: 'end_turn' })
    const chunks = sessionUpdates(p, sessionId).filter((u) => u.sessionUpdate === 'agent_message_chunk' || u.sessionUpdate === 'agent_thought_chunk')
    expect(chunks.filter((u) => u.sessionUpdate === 'agent_message_chunk').map((u) => (u as { content: { text: string } }).content.text).join('')).toBe('Hello from the mock model')
    expect(chunks.filter((u) => u.sessionUpdate === 'agent_thought_chunk').map((u) => (u as { content: { text: string } }).content.text).join('')).toBe('thinking it over')
    expect(new Set(chunks.map((u) => (u as { messageId?: string }).messageId))).toEqual(new Set(['1:1']))
    expect(sessionUpdates(p, sessionId).some((u) => u.sessionUpdate === 'usage_update')).toBe(true)
    await until(() => sessionUpdates(p, sessionId).some((u) => u.sessionUpdate === 'session_info_update'), 5000, 'the title')
    expect(sessionUpdates(p, sessionId).find((u) => u.sessionUpdate === 'session_info_update')).toMatchObject({ title: 'hello' })
    expect(p.frames.every((f) => (f as { jsonrpc?: string }).jsonrpc === '2.0')).toBe(true)
  })

  it('terminal cards with the capability: a real bash call', async () => {
    const p = suite.start([{ toolCalls: [{ id: 'b1', name: 'bash', arguments: { command: "printf 'one\\ntwo\\n' > made.txt; cat made.txt; exit 3", description: 'Write and show a file' } }] }, { text: 'done' }])
    const sessionId = await session(p, { _meta: { terminal_output: true } })
    expect(await ask(p, sessionId, 'run it')).toMatchObject({ stopReason: 'end_turn' })
    expect(readFileSync(join(suite.setup.cwd, 'made.txt'), 'utf8')).toBe('one\ntwo\n')
    const updates = tools(p, sessionId)
    expect(updates[0]).toEqual({
      sessionUpdate: 'tool_call', toolCallId: 'b1', status: 'pending', kind: 'execute', locations: [],
      title: "printf 'one\\ntwo\\n' > made.txt; cat made.txt; exit 3",
      rawInput: { command: "printf 'one\\ntwo\\n' > made.txt; cat made.txt; exit 3", description: 'Write and show a file' },
      content: [{ type: 'content', content: { type: 'text', text: 'Write and show a file' } }, { type: 'terminal', terminalId: 'dsh-term:b1' }],
      _meta: { terminal_info: { terminal_id: 'dsh-term:b1', cwd: suite.setup.cwd } },
    })
    const rest = updates.slice(1)
    for (const u of rest) expect(u).not.toHaveProperty('content')
    expect(rest[0]).toEqual({ sessionUpdate: 'tool_call_update', toolCallId: 'b1', status: 'in_progress' })
    const outputs = rest.filter((u) => metaOf(u).terminal_output)
    expect(outputs.length).toBeGreaterThan(0)
    expect(outputs.every((u) => metaOf(u).terminal_output!.terminal_id === 'dsh-term:b1')).toBe(true)
    expect(outputs.map((u) => metaOf(u).terminal_output!.data).join('')).toBe('one\ntwo\n')
    expect(rest.at(-1)).toEqual({
      sessionUpdate: 'tool_call_update', toolCallId: 'b1', status: 'completed',
      rawOutput: { content: [{ type: 'text', text: 'one\ntwo\n[exit code: 3]' }], isError: false },
      _meta: { terminal_exit: { terminal_id: 'dsh-term:b1', exit_code: 3 } },
    })
  })

  it('the console fallback without the capability', async () => {
    const p = suite.start([{ toolCalls: [{ id: 'b2', name: 'bash', arguments: { command: 'echo fallback', description: 'Say it' } }] }, { text: 'done' }])
    const sessionId = await session(p)
    await ask(p, sessionId, 'run it')
    const updates = tools(p, sessionId)
    expect(JSON.stringify(updates)).not.toMatch(/terminal_(info|output|exit)|"terminal"/)
    expect(updates[0]).toMatchObject({ sessionUpdate: 'tool_call', title: 'echo fallback', kind: 'execute', content: [{ type: 'content', content: { type: 'text', text: 'Say it' } }] })
    expect(updates.at(-1)).toEqual({
      sessionUpdate: 'tool_call_update', toolCallId: 'b2', status: 'completed',
      rawOutput: { content: [{ type: 'text', text: 'fallback' }], isError: false },
      content: [{ type: 'content', content: { type: 'text', text: 'Say it' } }, { type: 'content', content: { type: 'text', text: '```console\nfallback\n```' } }],
    })
  })
})

describe('dsh --profile acp: permission requests on an escalated bash', () => {
  const outside = () => tempDir('dsh-acp-outside-')
  const escalation = (target: string): Script => [
    { toolCalls: [{ id: 'w1', name: 'bash', arguments: { command: `echo report > ${target}` } }] },
    { toolCalls: [{ id: 'w2', name: 'bash', arguments: { command: `echo report > ${target}`, escalate: true, justification: 'the report belongs next to the others' } }] },
    { text: 'finished' },
  ]

  it('the sandbox denies, the escalation asks with what will run; allow once writes the file', async () => {
    const target = join(outside(), 'report.txt')
    const p = suite.start(escalation(target))
    const sessionId = await session(p)
    expect(await ask(p, sessionId, 'write the report')).toMatchObject({ stopReason: 'end_turn' })
    const first = tools(p, sessionId).filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'w1').at(-1)
    expect(JSON.stringify(first)).toContain('sandbox denied')
    expect(p.permissions).toHaveLength(1)
    const request = p.permissions[0]!
    expect(request.sessionId).toBe(sessionId)
    expect(request.toolCall).toMatchObject({
      toolCallId: 'w2', title: `echo report > ${target}`, kind: 'execute',
      rawInput: { command: `echo report > ${target}`, escalate: true, justification: 'the report belongs next to the others' },
      content: expect.arrayContaining([{ type: 'content', content: { type: 'text', text: 'Needs to run outside the sandbox: the report belongs next to the others' } }]),
    })
    expect(request.options).toEqual([
      { optionId: 'allow-once', name: 'Allow once', kind: 'allow_once' },
      { optionId: 'allow-always', name: `Always allow: run exactly \`echo report > ${target}\` outside the sandbox in this session`, kind: 'allow_always' },
      { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
    ])
    expect(readFileSync(target, 'utf8')).toBe('report\n')
  })

  it('a subagent\'s escalation is asked in the parent session, on the task call the editor shows', async () => {
    const target = join(outside(), 'child.txt')
    const p = suite.start([
      { toolCalls: [{ id: 't1', name: 'task', arguments: { description: 'write the child report', prompt: 'Write the report.' } }] },
      { toolCalls: [{ id: 'c1', name: 'bash', arguments: { command: `echo child > ${target}`, escalate: true, justification: 'the report lives outside' } }] },
      { text: 'child wrote it' },
      { text: 'parent done' },
    ])
    const sessionId = await session(p)
    expect(await ask(p, sessionId, 'delegate')).toMatchObject({ stopReason: 'end_turn' })
    expect(p.permissions).toHaveLength(1)
    expect(p.permissions[0]).toMatchObject({ sessionId, toolCall: { toolCallId: 't1', title: `echo child > ${target}` } })
    expect(readFileSync(target, 'utf8')).toBe('child\n')
  })

  it('reject leaves the world untouched and the turn goes on', async () => {
    const target = join(outside(), 'report.txt')
    const p = suite.start(escalation(target))
    p.answer = () => ({ outcome: { outcome: 'selected', optionId: 'reject' } })
    const sessionId = await session(p)
    expect(await ask(p, sessionId, 'write the report')).toMatchObject({ stopReason: 'end_turn' })
    expect(existsSync(target)).toBe(false)
    expect(tools(p, sessionId).filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'w2').at(-1)).toMatchObject({ status: 'failed' })
  })

  it('a cancelled permission request cancels the call, not the session', async () => {
    const target = join(outside(), 'report.txt')
    const p = suite.start([...escalation(target), { text: 'still here' }])
    p.answer = () => ({ outcome: { outcome: 'cancelled' } })
    const sessionId = await session(p)
    expect(await ask(p, sessionId, 'write the report')).toMatchObject({ stopReason: 'end_turn' })
    expect(existsSync(target)).toBe(false)
    expect(await ask(p, sessionId, 'and now?')).toMatchObject({ stopReason: 'end_turn' })
  })
})

describe('dsh --profile acp: cancel races', () => {
  async function quietAfter(p: AcpProcess, sessionId: string): Promise<void> {
    const count = sessionUpdates(p, sessionId).length
    await new Promise((r) => setTimeout(r, 300))
    expect(sessionUpdates(p, sessionId).slice(count)).toEqual([])
  }

  it('before the first chunk: cancelled, no update after the reply, usable afterwards', async () => {
    const p = suite.start([{ fault: 'stall', text: '' }, { text: 'back again' }])
    const sessionId = await session(p)
    const turn = ask(p, sessionId, 'hang')
    await until(() => suite.model.requests.length === 1, 15_000, 'the model request')
    await p.agent.notify('session/cancel', { sessionId })
    expect(await turn).toEqual({ stopReason: 'cancelled' })
    await quietAfter(p, sessionId)
    expect(await ask(p, sessionId, 'again')).toMatchObject({ stopReason: 'end_turn' })
  })

  it('during a running command: the process is gone when the prompt answers', async () => {
    const marker = `31.${process.pid}`
    const p = suite.start([{ toolCalls: [{ id: 's1', name: 'bash', arguments: { command: `echo started; sleep ${marker}` } }] }, { text: 'after' }])
    const sessionId = await session(p, { _meta: { terminal_output: true } })
    const turn = ask(p, sessionId, 'sleep')
    await until(() => processesWith(marker, 'sleep').length > 0, 15_000, 'the sleep process')
    await p.agent.notify('session/cancel', { sessionId })
    expect(await turn).toEqual({ stopReason: 'cancelled' })
    await until(() => processesWith(`sleep ${marker}`).length === 0, 2000, 'the sleep process to be gone')
    expect(tools(p, sessionId).some((u) => metaOf(u).terminal_exit)).toBe(false)
    await quietAfter(p, sessionId)
    expect(await ask(p, sessionId, 'go on')).toMatchObject({ stopReason: 'end_turn' })
  })

  it('during a permission request: the request is cancelled on the wire and nothing runs', async () => {
    const target = join(tempDir('dsh-acp-outside-'), 'never.txt')
    const p = suite.start([{ toolCalls: [{ id: 'e1', name: 'bash', arguments: { command: `echo x > ${target}`, escalate: true, justification: 'test' } }] }])
    let cancelledOnWire = false
    p.answer = (_request, signal) => new Promise((resolve) => {
      signal.addEventListener('abort', () => { cancelledOnWire = true; resolve({ outcome: { outcome: 'cancelled' } }) }, { once: true })
    })
    const sessionId = await session(p)
    const turn = ask(p, sessionId, 'write')
    await until(() => p.permissions.length === 1, 15_000, 'the permission request')
    await p.agent.notify('session/cancel', { sessionId })
    expect(await turn).toEqual({ stopReason: 'cancelled' })
    await until(() => cancelledOnWire, 2000, '$/cancel_request')
    expect(existsSync(target)).toBe(false)
    await quietAfter(p, sessionId)
  })
})

describe('dsh --profile acp: robustness', () => {
  it('a malformed line gets -32700 and the connection keeps serving', async () => {
    const p = suite.start([])
    await p.initialize()
    p.writeRaw('{this is not json\n')
    await until(() => p.frames.some((f) => (f as { error?: { code: number } }).error?.code === -32700), 5000, 'the parse error')
    expect(p.frames.find((f) => (f as { error?: { code: number } }).error?.code === -32700)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } })
    const { sessionId } = await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [] })
    expect(sessionId).toMatch(/\S/)
  })

  it('unknown session -32002 naming it; relative cwd and unsupported content -32602 before anything runs', async () => {
    const p = suite.start([])
    const sessionId = await session(p)
    expect(await rpcError(ask(p, 'no-such-session', 'hi'))).toMatchObject({ code: -32002, data: { sessionId: 'no-such-session' }, message: expect.stringContaining('no-such-session') })
    expect((await rpcError(p.agent.request('session/new', { cwd: 'relative', mcpServers: [] }))).code).toBe(-32602)
    expect((await rpcError(p.agent.request('session/prompt', { sessionId, prompt: [{ type: 'audio', data: 'AAAA', mimeType: 'audio/wav' }] }))).code).toBe(-32602)
    expect(suite.model.requests).toEqual([])
  })

  it('a missing key fails session/new with -32000 and the auth methods', async () => {
    suite.setup.env.DEEPSEEK_API_KEY = ''
    const p = suite.start([])
    await p.initialize({ auth: { terminal: true } })
    const error = await rpcError(p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [] }))
    expect(error).toMatchObject({ code: -32000, data: { authMethods: [expect.objectContaining({ id: 'api-key' }), expect.objectContaining({ id: 'terminal' })] } })
    await p.agent.request('authenticate', { methodId: 'api-key', _meta: { 'api-key': { apiKey: 'sk-from-editor' } } })
    expect(readFileSync(join(suite.setup.home, '.credentials.yaml'), 'utf8')).toContain('sk-from-editor')
    expect(p.stderr()).not.toContain('sk-from-editor')
  })

  it('stdin EOF during a running command: exit 0 within 2 s, no process left behind', async () => {
    const marker = `32.${process.pid}`
    const p = suite.start([{ toolCalls: [{ id: 'z1', name: 'bash', arguments: { command: `sleep ${marker}` } }] }])
    const sessionId = await session(p)
    void ask(p, sessionId, 'sleep').catch(() => undefined)
    await until(() => processesWith(`sleep ${marker}`).length > 0, 15_000, 'the sleep process')
    p.child.stdin!.end()
    const exit = await Promise.race([p.exited, new Promise((r) => setTimeout(r, 2000, 'still running'))])
    expect(exit).toEqual({ code: 0, signal: null })
    expect(processesWith(`sleep ${marker}`)).toEqual([])
  })
})
