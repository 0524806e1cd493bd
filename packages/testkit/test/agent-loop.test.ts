import { defineTool, type Session } from '@dsh/core'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { type Script } from '../src/index.js'
import { buildTree, expectRequestsMatchLog, until, useMockModel } from '../src/tree.js'

/** What the echo tool saw, in order (to tell parallel from sequential runs). */
const starts: string[] = []

const echo = defineTool({
  name: 'echo', description: 'Echo text back.', concurrencySafe: true,
  parameters: z.object({ text: z.string(), delayMs: z.number().int().optional() }),
  async execute(args, call) {
    starts.push(`start ${args.text}`)
    if (args.delayMs) await new Promise((r) => setTimeout(r, args.delayMs))
    if (call.signal.aborted) throw new Error('aborted')
    starts.push(`end ${args.text}`)
    return args.text
  },
  output: { render: (value: string) => `echo: ${value}` },
})

const wait = defineTool({
  name: 'wait', description: 'Wait until cancelled.', parameters: z.object({}),
  execute: (_args, call) => new Promise<string>((resolve) => call.signal.addEventListener('abort', () => resolve('stopped'), { once: true })),
  output: { render: (value: string) => value },
})

const model = useMockModel()

const tree = (script: Script) => buildTree(model(), {
  script, retry: { baseDelayMs: 5, maxDelayMs: 50 }, permission: { default: 'workspace-write' }, tools: [echo, wait],
})

const types = (session: Session) => session.events.filter((e) => e.type !== 'assistant/chunk').map((e) => e.type)

describe('agent loop', () => {
  it('answers in one step and logs the turn', async () => {
    const { session, agent } = await tree([{ text: 'Hello there', reasoning: 'think' }])
    const outcome = await agent.followup('hi')
    expect(outcome).toEqual({ turn: 1, reason: 'completed', text: 'Hello there' })
    expect(types(session)).toEqual(['turn/start', 'user/message', 'step/start', 'request/header', 'assistant/message', 'step/end', 'turn/end'])
    expect(session.deriveMessages()).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'think' }, { type: 'text', text: 'Hello there' }] },
    ])
    expect(session.events.some((e) => e.type === 'assistant/chunk')).toBe(true)
    expectRequestsMatchLog(model(), session)
  })

  it('runs tool calls, commits results in model order, and continues', async () => {
    const { session, agent } = await tree([
      { toolCalls: [{ name: 'echo', arguments: { text: 'slow', delayMs: 60 } }, { name: 'echo', arguments: { text: 'fast' } }] },
      { text: 'done' },
    ])
    starts.length = 0
    const outcome = await agent.followup('go')
    expect(outcome.reason).toBe('completed')
    // they ran in parallel: the fast call started and finished while the slow one was running
    expect(starts).toEqual(['start slow', 'start fast', 'end fast', 'end slow'])
    const results = session.events.filter((e) => e.type === 'tool/result').map((e) => e.data)
    expect(results).toEqual([
      { callId: 'call_1', name: 'echo', content: [{ type: 'text', text: 'echo: slow' }], isError: false },
      { callId: 'call_2', name: 'echo', content: [{ type: 'text', text: 'echo: fast' }], isError: false },
    ])
    const calls = session.events.filter((e) => e.type === 'tool/call')
    expect(calls.every((c) => c.seq < session.events.findIndex((e) => e.type === 'tool/result'))).toBe(true)
    expect(model().requests).toHaveLength(2)
    expectRequestsMatchLog(model(), session)
  })

  it('gives the model a readable error for an unknown tool or invalid arguments, and goes on', async () => {
    const { session, agent } = await tree([
      { toolCalls: [{ name: 'nope', arguments: {} }, { name: 'echo', arguments: { text: 5 } }, { name: 'echo', arguments: '{bad json' }] },
      { text: 'recovered' },
    ])
    const outcome = await agent.followup('go')
    expect(outcome).toMatchObject({ reason: 'completed', text: 'recovered' })
    const results = session.events.filter((e) => e.type === 'tool/result').map((e) => e.data as { isError: boolean; content: { text: string }[] })
    expect(results.map((r) => r.isError)).toEqual([true, true, true])
    expect(results[0]!.content[0]!.text).toContain('Unknown tool "nope"')
    expect(results[1]!.content[0]!.text).toContain('Invalid arguments for echo: text:')
    expect(results[2]!.content[0]!.text).toContain('not valid JSON')
    expectRequestsMatchLog(model(), session)
  })

  it('retries a 429 after the server-given delay and logs the retry', async () => {
    const { session, agent } = await tree([{ error: { status: 429, retryAfter: 0 } }, { text: 'ok after retry' }])
    const outcome = await agent.followup('go')
    expect(outcome).toMatchObject({ reason: 'completed', text: 'ok after retry' })
    expect(session.events.filter((e) => e.type === 'llm/retry').map((e) => e.data)).toEqual([
      { attempt: 1, code: 'RATE_LIMIT', message: expect.any(String), delayMs: 0 },
    ])
    expectRequestsMatchLog(model(), session)
  })

  it('ends the turn with the auth error on 401 and stays usable', async () => {
    const { session, agent } = await tree([{ error: { status: 401, message: 'bad key' } }, { text: 'second turn works' }])
    const first = await agent.followup('go')
    expect(first.reason).toBe('error')
    expect(first.error?.code).toBe('AUTH')
    expect(first.error?.message).not.toContain('mock-key')
    const second = await agent.followup('again')
    expect(second).toMatchObject({ reason: 'completed', text: 'second turn works' })
    expectRequestsMatchLog(model(), session)
  })

  it('cancels a stalled request, keeps what streamed, and stays usable', async () => {
    const { session, agent } = await tree([{ fault: 'stall', text: 'partial answer' }, { text: 'fresh' }])
    const turn = agent.followup('go')
    await until(() => session.events.some((e) => e.type === 'assistant/chunk'))
    agent.cancel()
    const outcome = await turn
    expect(outcome.reason).toBe('aborted')
    const message = session.last('assistant/message')!.data
    expect(message).toMatchObject({ finish: 'aborted', interrupted: true })
    expect(session.last('turn/end')!.data).toEqual({ turn: 1, reason: 'aborted' })
    expect(await agent.followup('next')).toMatchObject({ reason: 'completed', text: 'fresh' })
    expectRequestsMatchLog(model(), session)
  })

  it('cancels running tools: every call gets a result and the turn ends aborted', async () => {
    const { session, agent } = await tree([{ toolCalls: [{ name: 'wait', arguments: {} }, { name: 'echo', arguments: { text: 'never' } }] }])
    const turn = agent.followup('go')
    await until(() => session.events.some((e) => e.type === 'tool/call'))
    agent.cancel()
    expect((await turn).reason).toBe('aborted')
    const results = session.events.filter((e) => e.type === 'tool/result').map((e) => e.data as { callId: string; isError: boolean })
    expect(results.map((r) => r.callId)).toEqual(['call_1', 'call_2'])
    expect(session.deriveMessages().at(-1)).toMatchObject({ role: 'tool', callId: 'call_2', isError: true })
  })

  it('steers a running turn: the message enters the next step', async () => {
    const { session, agent } = await tree([
      { toolCalls: [{ name: 'echo', arguments: { text: 'a', delayMs: 80 } }] },
      { text: 'saw the steer' },
    ])
    const turn = agent.followup('start')
    await until(() => session.events.some((e) => e.type === 'tool/call'))
    agent.steer('also do this')
    expect(await turn).toMatchObject({ reason: 'completed', text: 'saw the steer' })
    const secondUser = session.events.filter((e) => e.type === 'user/message')[1]!
    expect(secondUser.data).toMatchObject({ via: 'steer', content: [{ type: 'text', text: 'also do this' }] })
    expect(model().requests).toHaveLength(2)
    expectRequestsMatchLog(model(), session)
  })

  it('a plugin listener that throws mid-step fails the turn, closes the step, and leaves the agent usable', async () => {
    const { root, session, agent } = await tree([{ error: { status: 500 } }, { text: 'works again' }])
    let thrown = 0
    // prepended: it runs before the retry policy
    root.on('agent/request-error', () => {
      thrown++
      throw new Error('policy plugin broke')
    }, true)
    const first = await agent.followup('go')
    expect(first).toEqual({ turn: 1, reason: 'error', error: { code: 'INTERNAL', message: 'policy plugin broke' }, text: '' })
    expect(thrown).toBe(1)
    expect(types(session)).toEqual(['turn/start', 'user/message', 'step/start', 'request/header', 'step/end', 'turn/end'])
    expect(await agent.followup('again')).toEqual({ turn: 2, reason: 'completed', text: 'works again' })
  })

  it('a turn that produced no answer reports no text, not an earlier turn\'s', async () => {
    const { agent } = await tree([{ text: 'first answer' }, { error: { status: 401 } }])
    expect((await agent.followup('one')).text).toBe('first answer')
    expect(await agent.followup('two')).toMatchObject({ reason: 'error', text: '' })
  })

  it('inject queues for the next step without waking; steer wakes an idle agent', async () => {
    const { session, agent } = await tree([{ text: 'saw both' }])
    agent.inject('background fact')
    await new Promise((r) => setTimeout(r, 30))
    expect(agent.busy).toBe(false)
    expect(session.events).toHaveLength(0)
    agent.steer('now go')
    await until(() => session.last('turn/end') !== undefined)
    await agent.idle()
    expect(session.events.filter((e) => e.type === 'user/message').map((e) => e.data)).toEqual([
      { id: 'u-1', content: [{ type: 'text', text: 'background fact' }], via: 'inject' },
      { id: 'u-2', content: [{ type: 'text', text: 'now go' }], via: 'steer' },
    ])
    expectRequestsMatchLog(model(), session)
  })

  it('agent/pre-step may rewrite what enters or reject it (the turn then spends no step)', async () => {
    const { root, session, agent } = await tree([{ text: 'ok', expect: { lastUserTextIncludes: '[redacted]' } }])
    root.on('agent/pre-step', async (_agent, messages, next) => {
      const admitted = await next()
      if (messages.some((m) => m.content.some((c) => c.type === 'text' && c.text.includes('forbidden')))) return null
      return admitted?.map((m) => ({ ...m, content: m.content.map((c) => (c.type === 'text' ? { ...c, text: c.text.replace('secret', '[redacted]') } : c)) })) ?? null
    })
    expect(await agent.followup('my secret plan')).toMatchObject({ reason: 'completed', text: 'ok' })
    expect(await agent.followup('something forbidden')).toEqual({ turn: 2, reason: 'rejected', text: '' })
    expect(model().requests).toHaveLength(1)
    expect(session.events.filter((e) => e.type === 'turn/start' || e.type === 'turn/end' || e.type === 'step/start').map((e) => e.type).slice(-2))
      .toEqual(['turn/start', 'turn/end'])
    expectRequestsMatchLog(model(), session)
  })

  it('agent/turn-stopping may keep the turn going after queueing input', async () => {
    const { root, session, agent } = await tree([{ text: 'first' }, { text: 'second, after the check' }])
    let checks = 0
    root.on('agent/turn-stopping', (a) => {
      if (checks++ > 0) return undefined
      a.inject('did you verify?')
      return true
    })
    expect(await agent.followup('go')).toEqual({ turn: 1, reason: 'completed', text: 'second, after the check' })
    expect(session.events.filter((e) => e.type === 'step/start')).toHaveLength(2)
    expectRequestsMatchLog(model(), session)
  })

  it('tools/pre-execute: deny and ask; with no answerer ask is a denial that says why, with one allow-always is remembered', async () => {
    const script: Script = [
      { toolCalls: [{ name: 'echo', arguments: { text: 'deny me' } }, { name: 'echo', arguments: { text: 'ask me' } }] },
      { text: 'headless part done' },
      { toolCalls: [{ name: 'echo', arguments: { text: 'ask me' } }] },
      { toolCalls: [{ name: 'echo', arguments: { text: 'ask me' } }] },
      { text: 'all done' },
    ]
    const { root, session, agent } = await tree(script)
    root.on('tools/pre-execute', async (call, next) => {
      const text = (call.args as { text: string }).text
      if (text === 'deny me') return { action: 'deny', reason: 'policy says no' }
      if (text === 'ask me') return { action: 'ask', reason: 'policy wants a human' }
      return next()
    })
    await agent.followup('first')
    const results = () => session.events.filter((e) => e.type === 'tool/result').map((e) => (e.data as { content: { text: string }[] }).content[0]!.text)
    expect(results()).toEqual([
      'Denied: policy says no',
      'Not run: it needs approval (policy wants a human), and no one can approve on this surface (a headless run denies what needs approval).',
    ])
    const asked: string[] = []
    root.approval.setAnswerer(async (_session, request) => {
      asked.push(request.reason ?? '')
      return 'allow-always'
    })
    expect(await agent.followup('second')).toMatchObject({ reason: 'completed', text: 'all done' })
    expect(results().slice(2)).toEqual(['echo: ask me', 'echo: ask me'])
    expect(asked).toEqual(['policy wants a human'])
    expect(session.events.filter((e) => e.type === 'approval/decision').map((e) => e.data)).toEqual([
      { id: expect.any(String), outcome: 'reject', reason: expect.stringContaining('no one can answer'), scope: 'tool:echo' },
      { id: expect.any(String), outcome: 'allow-always', scope: 'tool:echo' },
      { id: expect.any(String), outcome: 'allow-once', scope: 'tool:echo', remembered: true, reason: 'allowed always earlier in this session' },
    ])
  })

  it('remembered allow-always: the incremental scan sees decisions logged after an earlier question, by anyone, and only allow-always', async () => {
    const { root, session } = await tree([{ text: 'unused' }])
    expect(root.approval.remembered(session, 'tool:a')).toBe(false) // scans the log so far
    for (let i = 0; i < 50; i++) session.append('notice', { level: 'warn', message: `filler ${i}`, source: 'test' })
    session.append('approval/decision', { id: 'x1', outcome: 'allow-once', scope: 'tool:b' })
    session.append('approval/decision', { id: 'x2', outcome: 'allow-always', scope: 'tool:a' })
    expect(root.approval.remembered(session, 'tool:a')).toBe(true)
    expect(root.approval.remembered(session, 'tool:b')).toBe(false)
    session.append('approval/decision', { id: 'x3', outcome: 'allow-always', scope: 'tool:b' })
    expect(root.approval.remembered(session, 'tool:b')).toBe(true)
    expect(root.approval.remembered(session, 'tool:c')).toBe(false)
  })

  it('keeps call ids unique in a session when the provider repeats one', async () => {
    const { session, agent } = await tree([
      { toolCalls: [{ id: 'dup', name: 'echo', arguments: { text: 'a' } }] },
      { toolCalls: [{ id: 'dup', name: 'echo', arguments: { text: 'b' } }] },
      { text: 'done' },
    ])
    expect(await agent.followup('go')).toMatchObject({ reason: 'completed' })
    expect(session.events.filter((e) => e.type === 'tool/result').map((e) => (e.data as { callId: string }).callId)).toEqual(['dup', 'dup_1_2'])
    expectRequestsMatchLog(model(), session)
  })
})

