import { afterEach, describe, expect, it } from 'vitest'
import { harness, updatesOf, type Harness } from './harness.js'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

describe('ACP bridge: initialize and a prompt turn', () => {
  it('advertises honest capabilities', async () => {
    h = await harness()
    const init = await h.initialize({ auth: { terminal: true } })
    expect(init.protocolVersion).toBe(1)
    expect(init.agentInfo).toEqual({ name: 'dsh', title: 'dsh', version: '0.1.0' })
    expect(init.agentCapabilities).toEqual({
      loadSession: true,
      promptCapabilities: { image: true, audio: false, embeddedContext: true },
      mcpCapabilities: { http: false, sse: false },
      sessionCapabilities: { list: {}, resume: {}, close: {}, fork: {}, additionalDirectories: {} },
      auth: { logout: {} },
      _meta: {
        dsh: { runtime: { version: '0.1.0', source: 'host' } },
        steering: { supported: true, method: '_session/steering' },
        jetbrains: { air: { fork: { version: 1, inclusive: true } } },
      },
    })
    expect(init.authMethods?.map((m) => m.id)).toEqual(['api-key', 'terminal'])
    expect(init.authMethods?.[1]).toMatchObject({ type: 'terminal', args: ['login'] })
  })

  it('streams text and reasoning with stable message ids and answers end_turn', async () => {
    h = await harness({ script: [{ reasoning: 'let me think', text: 'Hello there, friend', chunkSize: 5, usage: { input: 100, output: 20 } }] })
    await h.initialize()
    const { sessionId } = await h.newSession()
    const response = await h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] })
    expect(response).toEqual({ stopReason: 'end_turn', usage: { totalTokens: 120, inputTokens: 100, outputTokens: 20, thoughtTokens: 3 } })
    const turn = updatesOf(h, sessionId).filter((u) => u.sessionUpdate !== 'available_commands_update')
    const thought = turn.filter((u) => u.sessionUpdate === 'agent_thought_chunk')
    const text = turn.filter((u) => u.sessionUpdate === 'agent_message_chunk')
    expect(thought.map((u) => (u as { content: { text: string } }).content.text).join('')).toBe('let me think')
    expect(text.map((u) => (u as { content: { text: string } }).content.text).join('')).toBe('Hello there, friend')
    expect(new Set([...thought, ...text].map((u) => (u as { messageId?: string }).messageId))).toEqual(new Set(['1:1']))
    expect(turn.at(-1)).toEqual({ sessionUpdate: 'usage_update', used: 120, size: 128_000 })
  })

  it('maps a max-tokens finish to max_tokens and a model failure to a JSON-RPC error', async () => {
    h = await harness({ script: [{ text: 'cut sh', finish: 'max-tokens' }, { error: { status: 400, message: 'bad request body' } }] })
    await h.initialize()
    const { sessionId } = await h.newSession()
    expect(await h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'a' }] })).toMatchObject({ stopReason: 'max_tokens' })
    await expect(h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'b' }] })).rejects.toMatchObject({ code: -32603, message: expect.stringContaining('BAD_REQUEST') })
  })

  it('concurrent prompts to a stored, unopened session share one restore and one agent', async () => {
    h = await harness({ script: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] })
    await h.initialize()
    const { sessionId } = await h.newSession()
    await h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'first' }] })
    await h.agent.request('session/close', { sessionId })
    const replies = await Promise.all(['a', 'b'].map((text) => h!.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })))
    expect(replies.map((r) => r.stopReason)).toEqual(['end_turn', 'end_turn'])
    const events = h.root.sessions.get(sessionId)!.events
    expect(events.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: string }).reason)).toEqual(['completed', 'completed', 'completed'])
  })
})
