import * as acp from '@agentclientprotocol/sdk/unstable'
import { messageFingerprint } from '../src/fork.js'
import { afterEach, describe, expect, it } from 'vitest'
import { harness, until, updatesOf, type Harness } from './harness.js'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

async function rpcError(promise: Promise<unknown>): Promise<{ code: number; message: string; data?: unknown }> {
  try {
    await promise
  } catch (error) {
    if (error instanceof acp.RequestError) return { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) }
    throw error
  }
  throw new Error('expected a JSON-RPC error')
}

const prompt = (h: Harness, sessionId: string, text: string) => h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })

describe('ACP bridge: cancel', () => {
  it('before the first chunk: answers cancelled, nothing after the reply, the session stays usable', async () => {
    h = await harness({ script: [{ fault: 'stall', text: '' }, { text: 'still here' }] })
    await h.initialize()
    const { sessionId } = await h.newSession()
    const running = prompt(h, sessionId, 'hang')
    await until(() => h!.model.requests.length === 1)
    await h.agent.notify('session/cancel', { sessionId })
    expect(await running).toEqual({ stopReason: 'cancelled' })
    const count = h.updates.length
    await new Promise((r) => setTimeout(r, 100))
    expect(h.updates.length).toBe(count)
    expect(await prompt(h, sessionId, 'again')).toMatchObject({ stopReason: 'end_turn' })
    expect(updatesOf(h, sessionId).filter((u) => u.sessionUpdate === 'agent_message_chunk').map((u) => (u as { content: { text: string } }).content.text).join('')).toBe('still here')
  })

  it('during a tool: the tool is aborted and its result never reaches the client', async () => {
    h = await harness({ script: [{ toolCalls: [{ id: 'w1', name: 'sh', arguments: { command: 'sleep', wait: true, lines: ['started'] } }] }] })
    await h.initialize({ _meta: { terminal_output: true } })
    const { sessionId } = await h.newSession()
    const running = prompt(h, sessionId, 'go')
    await until(() => updatesOf(h!, sessionId).some((u) => (u._meta as { terminal_output?: unknown } | undefined)?.terminal_output))
    await h.agent.notify('session/cancel', { sessionId })
    expect(await running).toEqual({ stopReason: 'cancelled' })
    expect(updatesOf(h, sessionId).some((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'completed')).toBe(false)
    const session = h.root.sessions.get(sessionId)!
    expect(session.events.filter((e) => e.type === 'tool/result').map((e) => e.data)).toEqual([
      { callId: 'w1', name: 'sh', content: [{ type: 'text', text: 'started\n[killed by signal: SIGTERM]' }], isError: false },
    ])
    expect(session.last('turn/end')?.data).toEqual({ turn: 1, reason: 'aborted' })
  })

  it('during a permission request: the request is cancelled and the prompt answers cancelled', async () => {
    let asked: () => void = () => undefined
    const question = new Promise<void>((r) => { asked = r })
    h = await harness({
      script: [{ toolCalls: [{ id: 'p1', name: 'sh', arguments: { command: 'curl x', escalate: true } }] }],
      permission: () => { asked(); return new Promise<never>(() => undefined) },
    })
    await h.initialize()
    const { sessionId } = await h.newSession()
    const running = prompt(h, sessionId, 'go')
    await question
    await h.agent.notify('session/cancel', { sessionId })
    expect(await running).toEqual({ stopReason: 'cancelled' })
    const session = h.root.sessions.get(sessionId)!
    expect(session.events.filter((e) => e.type === 'approval/decision').map((e) => (e.data as { outcome: string }).outcome)).toEqual(['cancelled'])
  })

  it('queues a second prompt behind the running one; a cancel answers both', async () => {
    h = await harness({ script: [{ fault: 'stall' }, { text: 'never' }] })
    await h.initialize()
    const { sessionId } = await h.newSession()
    const first = prompt(h, sessionId, 'one')
    const second = prompt(h, sessionId, 'two')
    await until(() => h!.model.requests.length === 1)
    await h.agent.notify('session/cancel', { sessionId })
    expect(await first).toEqual({ stopReason: 'cancelled' })
    expect(await second).toEqual({ stopReason: 'cancelled' })
    expect(h.model.requests).toHaveLength(1)
  })

  it('a queued prompt runs its own turn after the first one answers', async () => {
    h = await harness({ script: [{ text: 'first answer', delayMs: 20, chunkSize: 3 }, { text: 'second answer' }] })
    await h.initialize()
    const { sessionId } = await h.newSession()
    const order: string[] = []
    const first = prompt(h, sessionId, 'one').then((r) => { order.push('one'); return r })
    const second = prompt(h, sessionId, 'two').then((r) => { order.push('two'); return r })
    expect(await first).toMatchObject({ stopReason: 'end_turn' })
    expect(await second).toMatchObject({ stopReason: 'end_turn' })
    expect(order).toEqual(['one', 'two'])
    expect(h.root.sessions.get(sessionId)!.events.filter((e) => e.type === 'turn/start').length).toBe(2)
  })
})

describe('ACP bridge: steering', () => {
  it('injects into the running turn, else asks for a prompt', async () => {
    h = await harness({ script: [{ toolCalls: [{ id: 's1', name: 'sh', arguments: { command: 'x', lines: ['a', 'b', 'c', 'd'] } }] }, { text: 'steered', expect: { lastUserTextIncludes: 'also do y' } }] })
    await h.initialize()
    const { sessionId } = await h.newSession()
    expect(await h.agent.request('_session/steering', { sessionId, prompt: [{ type: 'text', text: 'nothing runs' }] })).toEqual({ outcome: 'promptRequired', reason: 'noRunningTurn' })
    const running = prompt(h, sessionId, 'go')
    await until(() => updatesOf(h!, sessionId).some((u) => u.sessionUpdate === 'tool_call'))
    expect(await h.agent.request('_session/steering', { sessionId, prompt: [{ type: 'text', text: 'also do y' }] })).toEqual({ outcome: 'injected' })
    expect(await running).toMatchObject({ stopReason: 'end_turn' })
    expect(h.model.failures).toEqual([])
  })
})

describe('ACP bridge: session lifecycle', () => {
  it('load replays the log; list pages with titles and dates; resume does not replay', async () => {
    h = await harness({ script: [{ reasoning: 'hmm', toolCalls: [{ id: 'l1', name: 'sh', arguments: { command: 'ls', lines: ['a.txt'] } }] }, { text: 'one file' }], serverConfig: { pageSize: 1 } })
    await h.initialize({ _meta: { terminal_output: true } })
    const { sessionId } = await h.newSession()
    await prompt(h, sessionId, 'list files')
    await h.agent.request('session/close', { sessionId })
    const before = h.updates.length
    const loaded = await h.agent.request('session/load', { sessionId, cwd: h.cwd, mcpServers: [] })
    expect(loaded.modes?.currentModeId).toBe('workspace-write')
    const replay = h.updates.slice(before).map((u) => u.update).filter((u) => u.sessionUpdate !== 'available_commands_update')
    // the user message's id is the one logged (the host's prompt id)
    const userMessageId = (h.root.sessions.get(sessionId)!.events.find((e) => e.type === 'user/message')!.data as { id: string }).id
    expect(replay).toEqual([
      { sessionUpdate: 'user_message_chunk', messageId: userMessageId, content: { type: 'text', text: 'list files' } },
      { sessionUpdate: 'agent_thought_chunk', messageId: '1:1', content: { type: 'text', text: 'hmm' } },
      {
        sessionUpdate: 'tool_call', toolCallId: 'l1', status: 'pending', title: 'ls', kind: 'execute', locations: [], rawInput: { command: 'ls', lines: ['a.txt'] },
        content: [{ type: 'terminal', terminalId: 'dsh-term:l1' }], _meta: { terminal_info: { terminal_id: 'dsh-term:l1', cwd: h.cwd } },
      },
      { sessionUpdate: 'tool_call_update', toolCallId: 'l1', _meta: { terminal_output: { terminal_id: 'dsh-term:l1', data: 'a.txt' } } },
      { sessionUpdate: 'tool_call_update', toolCallId: 'l1', status: 'completed', rawOutput: { content: [{ type: 'text', text: 'a.txt' }], isError: false }, _meta: { terminal_exit: { terminal_id: 'dsh-term:l1', exit_code: 0 } } },
      { sessionUpdate: 'agent_message_chunk', messageId: '1:2', content: { type: 'text', text: 'one file' } },
    ])
    const second = await h.agent.request('session/new', { cwd: h.cwd, mcpServers: [] })
    const page1 = await h.agent.request('session/list', { cwd: h.cwd })
    expect(page1.sessions.map((s) => s.sessionId)).toEqual([second.sessionId])
    const page2 = await h.agent.request('session/list', { cwd: h.cwd, cursor: page1.nextCursor! })
    expect(page2).toEqual({ sessions: [{ sessionId, cwd: h.cwd, title: null, updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }], nextCursor: null })
    await h.agent.request('session/close', { sessionId })
    const count = updatesOf(h, sessionId).length
    await h.agent.request('session/resume', { sessionId, cwd: h.cwd })
    await until(() => updatesOf(h!, sessionId).length > count)
    await new Promise((r) => setTimeout(r, 50))
    expect(updatesOf(h, sessionId).slice(count).map((u) => u.sessionUpdate)).toEqual(['available_commands_update'])
  })

  it('prompting a stored session that is not open restores it silently', async () => {
    h = await harness({ script: [{ text: 'first' }, { text: 'second', expect: { lastUserTextIncludes: 'again' } }] })
    await h.initialize()
    const { sessionId } = await h.newSession()
    await prompt(h, sessionId, 'hello')
    await h.agent.request('session/close', { sessionId })
    expect(await prompt(h, sessionId, 'again')).toMatchObject({ stopReason: 'end_turn' })
    expect(h.model.failures).toEqual([])
    expect(h.model.requests[1]!.body).toMatchObject({ messages: expect.arrayContaining([expect.objectContaining({ role: 'assistant', content: 'first' })]) })
  })

  it('fork: whole, cut at an assistant message (inclusive), and bad references are -32602', async () => {
    h = await harness({ script: [{ text: 'answer one' }, { text: 'answer two' }] })
    await h.initialize()
    const { sessionId } = await h.newSession()
    await prompt(h, sessionId, 'q1')
    await prompt(h, sessionId, 'q2')
    const whole = await h.agent.request('session/fork', { sessionId, cwd: h.cwd })
    const cut = await h.agent.request('session/fork', { sessionId, cwd: h.cwd, _meta: { jetbrains: { air: { fork: { version: 1, messageId: '1:1', messageFingerprint: messageFingerprint('answer one') } } } } })
    const texts = (id: string) => h!.root.sessions.get(id)!.events.filter((e) => e.type === 'assistant/message').map((e) => (e.data as { content: { text: string }[] }).content[0]!.text)
    expect(texts(whole.sessionId)).toEqual(['answer one', 'answer two'])
    expect(texts(cut.sessionId)).toEqual(['answer one'])
    expect(whole.modes?.currentModeId).toBe('workspace-write')
    for (const fork of [{ version: 2, messageId: '1:1' }, { version: 1, messageId: '9:9' }, { version: 1, messageId: '1:1', messageFingerprint: messageFingerprint('other') }]) {
      const error = await rpcError(h.agent.request('session/fork', { sessionId, cwd: h.cwd, _meta: { jetbrains: { air: { fork } } } }))
      expect(error.code).toBe(-32602)
    }
  })

  it('unknown session -32002 naming it; relative cwd and unsupported content -32602 before anything runs', async () => {
    h = await harness({ script: [] })
    await h.initialize()
    expect(await rpcError(prompt(h, 'nope-123', 'hi'))).toEqual({ code: -32002, message: 'Resource not found: session nope-123', data: { sessionId: 'nope-123' } })
    expect(await rpcError(h.agent.request('session/load', { sessionId: 'nope-123', cwd: h.cwd, mcpServers: [] }))).toMatchObject({ code: -32002, data: { sessionId: 'nope-123' } })
    expect((await rpcError(h.agent.request('session/new', { cwd: 'relative/dir', mcpServers: [] }))).code).toBe(-32602)
    const { sessionId } = await h.newSession()
    const audio = await rpcError(h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'audio', data: 'AAAA', mimeType: 'audio/wav' }] }))
    expect(audio).toEqual({ code: -32602, message: 'Invalid params: prompt[0]: audio is not supported' })
    const badImage = await rpcError(h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'image', data: 'AAAA', mimeType: 'image/bmp' }] }))
    expect(badImage.code).toBe(-32602)
    expect(h.model.requests).toEqual([])
    expect(h.root.sessions.get(sessionId)!.events.some((e) => e.type === 'turn/start')).toBe(false)
  })

  it('modes and config options; unknown ids and values are -32602', async () => {
    h = await harness({ script: [] })
    await h.initialize()
    const created = await h.newSession()
    const { sessionId } = created
    expect(created.configOptions?.map((o) => [o.id, o.currentValue])).toEqual([['mode', 'workspace-write'], ['model', 'deepseek-chat'], ['reasoning_effort', 'default']])
    await h.agent.request('session/set_mode', { sessionId, modeId: 'read-only' })
    await until(() => updatesOf(h!, sessionId).some((u) => u.sessionUpdate === 'current_mode_update'))
    expect(updatesOf(h, sessionId).find((u) => u.sessionUpdate === 'current_mode_update')).toEqual({ sessionUpdate: 'current_mode_update', currentModeId: 'read-only' })
    const model = await h.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'claude-haiku-4-5' })
    expect(model.configOptions.find((o) => o.id === 'model')?.currentValue).toBe('claude-haiku-4-5')
    const effort = await h.agent.request('session/set_config_option', { sessionId, configId: 'reasoning_effort', value: 'high' })
    expect(effort.configOptions.find((o) => o.id === 'reasoning_effort')?.currentValue).toBe('high')
    const back = await h.agent.request('session/set_config_option', { sessionId, configId: 'reasoning_effort', value: 'default' })
    expect(back.configOptions.find((o) => o.id === 'reasoning_effort')?.currentValue).toBe('default')
    expect((await rpcError(h.agent.request('session/set_mode', { sessionId, modeId: 'yolo' }))).code).toBe(-32602)
    expect((await rpcError(h.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'gpt-9' }))).code).toBe(-32602)
    expect((await rpcError(h.agent.request('session/set_config_option', { sessionId, configId: 'colour', value: 'red' }))).code).toBe(-32602)
  })
})

describe('ACP bridge: authentication', () => {
  it('a missing key fails session/new with -32000 and the auth methods; api-key stores it; logout forgets it', async () => {
    h = await harness({ script: [{ text: 'hi' }], noKey: true })
    await h.initialize()
    const error = await rpcError(h.newSession())
    expect(error.code).toBe(-32000)
    expect(error.data).toMatchObject({ provider: 'deepseek', authMethods: [expect.objectContaining({ id: 'api-key' })] })
    await h.agent.request('authenticate', { methodId: 'api-key', _meta: { 'api-key': { apiKey: 'sk-test' } } })
    expect(h.root.credentials.getApiKey('deepseek')).toBe('sk-test')
    const { sessionId } = await h.newSession()
    await h.agent.request('logout', {})
    expect(h.root.credentials.getApiKey('deepseek')).toBeUndefined()
    expect((await rpcError(prompt(h, sessionId, 'hi'))).code).toBe(-32000)
    expect(h.model.requests).toEqual([])
  })

  it('/login and /logout typed in chat get a reply and never reach the model', async () => {
    h = await harness({ script: [] })
    await h.initialize()
    const { sessionId } = await h.newSession()
    expect(await prompt(h, sessionId, '/login')).toEqual({ stopReason: 'end_turn' })
    const reply = updatesOf(h, sessionId).find((u) => u.sessionUpdate === 'agent_message_chunk')
    expect(JSON.stringify(reply)).toContain("isn't available in this environment")
    expect(h.model.requests).toEqual([])
  })
})
