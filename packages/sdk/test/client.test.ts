import { PassThrough } from 'node:stream'
import type { HostClient } from '@dsh/host'
import { describe, expect, it } from 'vitest'
import { Client, RpcError, TimeoutError, TransportClosedError, type Transport } from '../src/index.js'
import { SdkCarrier } from '../src/server/carrier.js'
import { fakeHost, type FakeHandler } from './fake-host.js'

/** A Client wired to an in-process carrier over a fake host (no process). */
async function connect(handlers: Record<string, FakeHandler> = {}, options: ConstructorParameters<typeof Client>[0] = {}) {
  const host = fakeHost(handlers)
  const input = new PassThrough()
  const output = new PassThrough()
  const carrier = new SdkCarrier({ input, output, connect: (c) => host.connect(c), log: () => undefined })
  let resolveExit!: (e: TransportClosedError) => void
  const exited = new Promise<TransportClosedError>((r) => { resolveExit = r })
  const transport = (onData: (chunk: Buffer) => void): Transport => {
    output.on('data', onData)
    return {
      pid: undefined, exited, stderrTail: () => 'last words',
      write: (text) => { input.write(text) },
      stop: async () => {
        input.end()
        await carrier.closed
        resolveExit(new TransportClosedError('exited', 0, null, ''))
        return exited
      },
    }
  }
  const client = new Client(options, transport)
  await client.start()
  return { client, host, die: (code: number) => resolveExit(new TransportClosedError(`the dsh sdk server exited (code ${code})`, code, null, 'last words')) }
}

const detail = (id: string) => ({
  id, workspace: '/w', title: null, created: 0, updatedAt: 0, events: 0, status: 'idle', archived: false, parent: null, open: true,
  config: { provider: 'p', model: 'm', reasoningEffort: null, permissionMode: 'workspace-write', agentPreset: null }, lastSeq: -1,
})

/** A host whose prompts play a turn: optional approval, then the final text (and the decision). */
function turnHost(): Record<string, FakeHandler> {
  let seq = 0
  let n = 0
  return {
    'session/create': () => ({ session: detail('s1') }),
    'session/prompt': (params: { sessionId: string; prompt: string }, client: HostClient) => {
      const promptId = `u${++n}`
      const emit = (type: string, data: unknown) => client.notify('session/event', { sessionId: params.sessionId, event: { type, seq: seq++, time: 0, data }, view: null })
      setTimeout(() => void (async () => {
        emit('turn/start', { turn: n })
        emit('user/message', { id: promptId, content: [{ type: 'text', text: params.prompt }] })
        let extra = ''
        if (params.prompt.includes('ask')) {
          const answer = await client.request('approval/request', {
            sessionId: params.sessionId, requestId: 'a1', toolCallId: 'c1', tool: 'bash', title: 'touch x', kind: 'tool', rawInput: {}, reason: null, options: [],
          }, new AbortController().signal).catch((e: Error) => ({ decision: `error ${e.message}` }))
          extra = ` decision=${answer.decision}`
        }
        if (params.prompt.includes('tool')) {
          const out = await client.request('tool/call', { sessionId: params.sessionId, requestId: 't1', toolCallId: 'c2', tool: 'add', arguments: { a: 2, b: 3 } }, new AbortController().signal)
          extra = ` tool=${JSON.stringify(out)}`
        }
        emit('assistant/message', { id: 'm', content: [{ type: 'text', text: `echo ${params.prompt}${extra}` }], finish: 'stop' })
        emit('step/end', { turn: n, step: 0, usage: { inputTokens: 10, outputTokens: 2 } })
        emit('turn/end', { turn: n, reason: 'completed' })
      })(), 5)
      return { promptId, mode: 'queue', queued: false }
    },
  }
}

describe('the TypeScript client (in-process carrier, fake host)', () => {
  it('runs a prompt to its turn/end: final text, reason, usage, events', async () => {
    const { client } = await connect(turnHost())
    expect(client.initialized).toMatchObject({ protocolVersion: 1, capabilities: { approvals: true, questions: true, tools: true } })
    const session = await client.createSession({ workspace: '/w' })
    const seen: string[] = []
    const result = await session.run('hello', { onEvent: (e) => seen.push(e.type) })
    expect(result).toMatchObject({ text: 'echo hello', reason: 'completed', usage: { inputTokens: 10, outputTokens: 2 }, promptId: 'u1' })
    expect(result.events.map((e) => e.type)).toEqual(['turn/start', 'user/message', 'assistant/message', 'step/end', 'turn/end'])
    expect(seen).toEqual(result.events.map((e) => e.type))
    const second = await session.run('again')
    expect(second.text).toBe('echo again')
    await client.close()
  })

  it('rejects approvals by default and asks the run handler when there is one', async () => {
    const { client } = await connect(turnHost())
    const session = await client.createSession({ workspace: '/w' })
    expect((await session.run('ask')).text).toBe('echo ask decision=reject')
    const asked: string[] = []
    const allowed = await session.run('ask', { onApproval: (req) => { asked.push(req.title); return 'allow-once' } })
    expect(allowed.text).toBe('echo ask decision=allow-once')
    expect(asked).toEqual(['touch x'])
    await client.close()
  })

  it('executes client tools; a throwing tool becomes an error result', async () => {
    const { client, host } = await connect(turnHost())
    let fail = false
    const session = await client.createSession({
      workspace: '/w',
      tools: [{ name: 'add', description: 'adds', inputSchema: { type: 'object' }, execute: (args: { a: number; b: number }) => {
        if (fail) throw new Error('boom')
        return String(args.a + args.b)
      } }],
    })
    expect(host.calls.find((c) => c.method === 'session/create')?.params).toEqual({ workspace: '/w', tools: [{ name: 'add', description: 'adds', inputSchema: { type: 'object' } }] })
    expect((await session.run('tool')).text).toBe('echo tool tool={"content":"5"}')
    fail = true
    expect((await session.run('tool')).text).toBe('echo tool tool={"content":"Error: boom","isError":true}')
    await client.close()
  })

  it('types server errors as RpcError with the dsh code, and times out', async () => {
    const { client } = await connect({ 'session/list': () => new Promise(() => undefined) })
    const error = await client.call('session/get', { sessionId: 'x' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RpcError)
    expect(error).toMatchObject({ code: -32002, data: { code: 'SESSION_NOT_FOUND' } })
    const bad = await client.call('session/rename', { sessionId: 'x', title: '' }).catch((e: unknown) => e)
    expect(bad).toMatchObject({ code: -32602, data: { issues: [expect.objectContaining({ path: 'params.title' })] } })
    await expect(client.listSessions({}, { timeoutMs: 50 })).rejects.toBeInstanceOf(TimeoutError)
    const abort = new AbortController()
    const pending = client.listSessions({}, { signal: abort.signal })
    abort.abort(new Error('stop'))
    await expect(pending).rejects.toThrow('stop')
    await client.close()
  })

  it('fails pending calls and event iterators with TransportClosedError when the server dies', async () => {
    const { client, die } = await connect({ ...turnHost(), 'session/list': () => new Promise(() => undefined) })
    const session = await client.createSession({ workspace: '/w' })
    const events = session.events()
    const pending = client.listSessions()
    die(137)
    const error = await pending.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TransportClosedError)
    expect(error).toMatchObject({ exitCode: 137, stderrTail: 'last words' })
    await expect(events.next()).rejects.toBeInstanceOf(TransportClosedError)
    await expect(client.call('session/list', {})).rejects.toBeInstanceOf(TransportClosedError)
  })

  it('closes with await using', async () => {
    const { client, host } = await connect()
    {
      await using c = client
      expect(c.methods).toContain('session/prompt')
    }
    expect(host.closed).toBe(1)
  })
})
