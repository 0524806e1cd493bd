import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { SdkCarrier } from '../src/server/carrier.js'
import { fakeHost } from './fake-host.js'

function setup(options: { maxFrameBytes?: number } = {}) {
  const input = new PassThrough()
  const output = new PassThrough()
  const host = fakeHost()
  const logs: string[] = []
  const carrier = new SdkCarrier({ input, output, connect: (c) => host.connect(c), log: (l) => logs.push(l), ...options })
  const frames: Record<string, any>[] = []
  const raw: string[] = []
  let buffered = ''
  const waiters: (() => void)[] = []
  output.setEncoding('utf8').on('data', (d: string) => {
    buffered += d
    let nl
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      raw.push(line)
      frames.push(JSON.parse(line))
      waiters.splice(0).forEach((w) => w())
    }
  })
  let read = 0
  /** The frame after the last one read (or frame number `count`). */
  const next = async (count = read + 1) => {
    while (frames.length < count) await new Promise<void>((r) => waiters.push(r))
    read = Math.max(read, count)
    return frames[count - 1]!
  }
  const send = (value: unknown) => {
    input.write(`${typeof value === 'string' ? value : JSON.stringify(value)}\n`)
  }
  const call = async (id: number, method: string, params?: unknown) => {
    const before = read
    send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) })
    for (;;) {
      const at = frames.findIndex((f, i) => i >= before && f.id === id && !f.method)
      if (at >= 0) {
        read = Math.max(read, at + 1)
        return frames[at]!
      }
      await new Promise<void>((r) => waiters.push(r))
    }
  }
  const init = (capabilities: Record<string, boolean> = {}) => call(0, 'initialize', { protocolVersion: 1, client: { name: 'test', version: '1' }, capabilities })
  return { input, output, host, logs, carrier, frames, raw, next, send, call, init }
}

describe('the sdk carrier', () => {
  it('answers garbage with -32700 and id null, then keeps serving', async () => {
    const t = setup()
    t.send('this is not json')
    expect(await t.next()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } })
    expect((await t.init()).result).toMatchObject({ protocolVersion: 1 })
  })

  it('refuses requests before initialize with -32600', async () => {
    const t = setup()
    expect(await t.call(1, 'session/list', {})).toMatchObject({ id: 1, error: { code: -32600, message: 'send initialize first' } })
    await t.init()
    expect(await t.call(2, 'session/list', {})).toMatchObject({ id: 2, result: {} })
    expect(await t.call(3, 'initialize', { protocolVersion: 1, client: { name: 'x', version: '1' } })).toMatchObject({ error: { code: -32600 } })
  })

  it('answers unknown and web-only methods with -32601, invalid params with -32602 and the issues', async () => {
    const t = setup()
    await t.init()
    expect(await t.call(1, 'session/frobnicate', {})).toMatchObject({ error: { code: -32601, message: 'unknown method "session/frobnicate"' } })
    expect(await t.call(2, 'session/respond', { sessionId: 's', requestId: 'r', result: {} })).toMatchObject({ error: { code: -32601 } })
    expect(await t.call(3, 'toString', {})).toMatchObject({ error: { code: -32601 } })
    expect(await t.call(4, 'session/rename', { sessionId: 7, title: '' })).toMatchObject({
      error: { code: -32602, data: { code: 'INVALID_PARAMS', issues: expect.arrayContaining([expect.objectContaining({ path: 'params.sessionId' }), expect.objectContaining({ path: 'params.title' })]) } },
    })
    expect(await t.call(5, 'session/get', { sessionId: 'x' })).toMatchObject({ error: { code: -32002, data: { code: 'SESSION_NOT_FOUND' } } })
  })

  it('answers bad envelopes with -32600, keeping the id when it could be read', async () => {
    const t = setup()
    t.send({ jsonrpc: '1.0', id: 5, method: 'initialize' })
    expect(await t.next()).toMatchObject({ id: 5, error: { code: -32600 } })
    t.send([{ jsonrpc: '2.0', id: 6, method: 'initialize' }])
    expect(await t.next()).toMatchObject({ id: null, error: { code: -32600 } })
    t.send({ jsonrpc: '2.0', id: 7, method: 'session/list', params: 'x' })
    expect(await t.next()).toMatchObject({ id: 7, error: { code: -32600 } })
    t.send('42')
    expect(await t.next()).toMatchObject({ id: null, error: { code: -32600 } })
  })

  it('reassembles a frame split across writes, and takes CRLF endings', async () => {
    const t = setup()
    const text = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'initialize', params: { protocolVersion: 1, client: { name: 'split', version: '1' } } })
    for (let i = 0; i < text.length; i += 7) t.input.write(text.slice(i, i + 7))
    t.input.write('\r\n')
    expect(await t.next()).toMatchObject({ id: 9, result: { protocolVersion: 1 } })
    expect(t.host.client().name).toBe('sdk:split')
  })

  it('keeps U+2028 and lone surrogates inside strings intact, one frame per line', async () => {
    const t = setup()
    await t.init()
    const line = '/echo a\u2028b\u2029c \ud800 end'
    const answer = await t.call(1, 'session/command', { sessionId: 's', line })
    expect(answer.result.reply).toBe(line)
    expect(t.raw.at(-1)).toContain('\\ud800')
  })

  it('answers a raw NUL inside a string with -32700 and keeps serving', async () => {
    const t = setup()
    t.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"client":{"name":"a\u0000b","version":"1"}}}')
    expect(await t.next()).toMatchObject({ id: null, error: { code: -32700 } })
    expect((await t.init()).result).toBeDefined()
  })

  it('takes an 8 MiB frame and answers it; a frame over the limit is -32700 and the next one is served', async () => {
    const t = setup({ maxFrameBytes: 1024 * 1024 })
    await t.init()
    t.send({ jsonrpc: '2.0', id: 1, method: 'session/command', params: { sessionId: 's', line: `/${'x'.repeat(2 * 1024 * 1024)}` } })
    expect(await t.next()).toMatchObject({ id: null, error: { code: -32700, data: { code: 'FRAME_TOO_LARGE' } } })
    const big = setup()
    await big.init()
    const answer = await big.call(2, 'session/command', { sessionId: 's', line: `/${'x'.repeat(8 * 1024 * 1024)}` })
    expect(answer).toMatchObject({ error: { code: -32602, data: { issues: [expect.objectContaining({ path: 'params.line' })] } } })
    expect(JSON.stringify(answer).length).toBeLessThan(2000)
    expect((await t.call(3, 'session/list', {})).result).toEqual({})
  })

  it('does not let __proto__ keys pollute anything', async () => {
    const t = setup()
    await t.init()
    t.send('{"jsonrpc":"2.0","id":1,"method":"session/get","params":{"__proto__":{"polluted":true},"sessionId":"x"}}')
    expect(await t.next()).toMatchObject({ id: 1, error: { code: -32602 } })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('sends server→client requests with fresh ids and checks the answers against the table', async () => {
    const t = setup()
    await t.init({ approvals: true })
    const client = t.host.client()
    expect(client.capabilities).toEqual({ approvals: true, questions: false, tools: false })
    const params = { sessionId: 's', requestId: 'r1', toolCallId: 'c1', tool: 'bash', title: 'rm', kind: 'tool' as const, rawInput: {}, reason: null, options: [] }
    const first = client.request('approval/request', params, new AbortController().signal)
    const second = client.request('approval/request', { ...params, requestId: 'r2' }, new AbortController().signal)
    const a = await t.next(2)
    const b = await t.next(3)
    expect(a).toMatchObject({ method: 'approval/request', params: { requestId: 'r1' } })
    expect(a.id).not.toBe(b.id)
    t.send({ jsonrpc: '2.0', id: b.id, result: { decision: 'maybe' } })
    t.send({ jsonrpc: '2.0', id: a.id, result: { decision: 'allow-once' } })
    await expect(first).resolves.toEqual({ decision: 'allow-once' })
    await expect(second).rejects.toMatchObject({ code: 'CLIENT_ANSWER_INVALID' })
    expect(t.logs.join('\n')).toContain('result.decision')
  })

  it('logs an answer to an unknown request id and keeps serving', async () => {
    const t = setup()
    await t.init()
    t.send({ jsonrpc: '2.0', id: 999, result: { decision: 'reject' } })
    expect((await t.call(1, 'session/list', {})).result).toEqual({})
    expect(t.logs).toEqual(['sdk: ignored an answer to unknown request id 999'])
  })

  it('stops waiting when the host aborts a request and tells the client', async () => {
    const t = setup()
    await t.init({ approvals: true })
    const abort = new AbortController()
    const waiting = t.host.client().request('question/request', { sessionId: 's', requestId: 'q', toolCallId: 'c', questions: [] }, abort.signal)
    const asked = await t.next(2)
    abort.abort()
    await expect(waiting).rejects.toMatchObject({ code: 'REQUEST_CANCELLED' })
    expect(await t.next(3)).toEqual({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: asked.id } })
    t.send({ jsonrpc: '2.0', id: asked.id, result: { answers: [] } })
    expect((await t.call(1, 'session/list', {})).result).toEqual({})
  })

  it('closes the host connection at end of input and refuses what still waits on the client', async () => {
    const t = setup()
    await t.init({ tools: true })
    const waiting = t.host.client().request('tool/call', { sessionId: 's', requestId: 'r', toolCallId: 'c', tool: 'x', arguments: {} }, new AbortController().signal)
    await t.next(2)
    t.input.end()
    await t.carrier.closed
    await expect(waiting).rejects.toMatchObject({ code: 'CLIENT_GONE' })
    expect(t.host.closed).toBe(1)
  })
})

describe('the sdk carrier and secrets', () => {
  it('does not echo a malformed frame (which may hold a key) in its -32700 answer', async () => {
    const t = setup()
    t.send('{"jsonrpc":"2.0","id":1,"method":"credentials/set","params":{"provider":"deepseek","key":"sk-canary-123456"')
    const answer = await t.next()
    expect(answer).toMatchObject({ id: null, error: { code: -32700, data: { code: 'PARSE_ERROR' } } })
    expect(JSON.stringify(answer)).not.toContain('canary')
    t.send('{"key":"sk-canary-123456" oops}')
    expect(JSON.stringify(await t.next())).not.toContain('canary')
  })
})

describe('the sdk carrier under hostile input', () => {
  it('answers every request id exactly once among random garbage (seeded), and keeps serving', async () => {
    let seed = 20261201
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed % n
    }
    const t = setup()
    await t.init()
    const pieces = ['{', '}', '[', ']', '"', ':', ',', 'null', '"jsonrpc"', '"2.0"', '"id"', '"method"', '"params"', '\u2028', '\ud800', '\u0000', '\r', '1e999', '__proto__', 'é']
    const ids: number[] = []
    for (let i = 0; i < 400; i++) {
      if (i % 3 === 0) {
        ids.push(i + 1)
        t.send({ jsonrpc: '2.0', id: i + 1, method: rand(2) ? 'session/list' : 'no/such', params: rand(2) ? {} : { junk: pieces[rand(pieces.length)] } })
      } else {
        t.input.write(`${Array.from({ length: 1 + rand(12) }, () => pieces[rand(pieces.length)]).join('')}\n`)
      }
    }
    const last = await t.call(9999, 'session/list', {})
    expect(last.result).toEqual({})
    const answered = t.frames.filter((f) => typeof f.id === 'number' && f.id !== 0 && f.id !== 9999 && !f.method).map((f) => f.id as number)
    expect(answered.filter((id) => ids.includes(id)).sort((a, b) => a - b)).toEqual(ids)
    expect(new Set(answered).size).toBe(answered.length)
  })
})
