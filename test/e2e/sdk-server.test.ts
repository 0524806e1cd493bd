// `dsh sdk` driven over raw stdio as a client written elsewhere would drive it, and the
// issue's bad-input list, each a test. The world is checked: files, /proc, the session log.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describeRpc, METHODS } from '@dsh/host-api'
import { createClient, TransportClosedError } from '@dsh/sdk'
import { afterAll, describe, expect, it } from 'vitest'
import { cleanEnv, DSH_BIN, runDsh } from './helpers/dsh.js'
import { spawnSdk, type RawSdk } from './helpers/sdk.js'
import { processesMatching, readSessionFile } from './helpers/session-file.js'
import { useDshWorld } from './helpers/world.js'

const world = useDshWorld({ logsCheck: false })
const open: RawSdk[] = []
const sdk = () => {
  const s = spawnSdk(world.env(), world.workspace)
  open.push(s)
  return s
}

// runs before the world closes the model (after-hooks unwind in reverse order)
afterAll(() => {
  for (const s of open) s.child.kill('SIGKILL')
})

const escalate = (file: string) => ({ toolCalls: [{ name: 'bash', arguments: { command: `printf yes > ${file}`, escalate: true, justification: 'test' } }] })
const isEvent = (sessionId: string, type: string, after = -1) => (f: Record<string, any>) =>
  f.method === 'session/event' && f.params.sessionId === sessionId && f.params.event.type === type && f.params.event.seq > after

async function created(s: RawSdk, capabilities: Record<string, boolean> = {}): Promise<string> {
  expect((await s.initialize(capabilities)).result).toMatchObject({ protocolVersion: 1, server: { name: 'dsh' } })
  const answer = await s.request('session/create', { workspace: world.workspace })
  expect(answer.result?.session?.workspace, JSON.stringify(answer)).toBe(world.workspace)
  return answer.result.session.id as string
}

describe('dsh sdk over raw stdio', () => {
  it('serves a tool-calling turn: a receipt at once, then durable events in seq order ending with turn/end', async () => {
    world.model.setScript([
      { toolCalls: [{ name: 'bash', arguments: { command: 'printf hi > out.txt' } }] },
      { text: 'All done.', expect: { lastToolResultIncludes: '' } },
    ])
    const s = sdk()
    const id = await created(s)
    const receipt = await s.request('session/prompt', { sessionId: id, prompt: 'write it' })
    expect(receipt.result).toMatchObject({ promptId: expect.any(String), mode: 'queue', queued: false })
    const end = await s.waitFor(isEvent(id, 'turn/end'), 'turn/end')
    expect(end.params.event.data.reason).toBe('completed')
    const events = s.frames.filter((f) => f.method === 'session/event' && f.params.sessionId === id).map((f) => f.params.event)
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i))
    const answer = events.filter((e) => e.type === 'assistant/message').at(-1)
    expect(answer.data.content).toEqual([{ type: 'text', text: 'All done.' }])
    expect(events.find((e) => e.type === 'user/message').data.id).toBe(receipt.result.promptId)
    const call = s.frames.find((f) => f.method === 'session/event' && f.params.event.type === 'tool/call')
    expect(call?.params.view).toMatchObject({ kind: 'tool-call', tool: 'bash', card: { card: 'terminal' } })
    expect(s.frames.some((f) => f.method === 'session/status' && f.params.status === 'running')).toBe(true)
    expect(readFileSync(join(world.workspace, 'out.txt'), 'utf8')).toBe('hi')
    // the log on disk holds every event the client was shown
    expect(readSessionFile(world.home, id).events.slice(0, events.length)).toEqual(events)
    s.child.stdin!.end()
    expect(await s.exited).toEqual({ code: 0, signal: null })
    expect(s.junk).toEqual([])
  })

  it('answers malformed frames and keeps serving: garbage, NUL, CRLF, a split frame, lone surrogates, U+2028, __proto__, unknown methods', async () => {
    const s = sdk()
    expect(await s.request('session/list', {})).toMatchObject({ error: { code: -32600, message: 'send initialize first' } })
    const id = await created(s)
    const before = s.frames.length
    s.write('this is garbage\n')
    s.write('{"jsonrpc":"2.0","id":1,"method":"session/get","params":{"sessionId":"a\u0000b"}}\n')
    await s.waitFor((f) => s.frames.indexOf(f) >= before + 1 && f.id === null, 'two parse errors')
    expect(s.frames.slice(before).filter((f) => f.id === null).map((f) => f.error.code)).toEqual([-32700, -32700])
    s.write(`{"jsonrpc":"2.0","id":2,"method":"session/get",`)
    s.write(`"params":{"sessionId":"${id}"}}\r\n`)
    expect((await s.waitFor((f) => f.id === 2, 'the split CRLF frame')).result.session.id).toBe(id)
    const title = 'line\u2028sep\u2029para \ud800 lone'
    expect((await s.request('session/rename', { sessionId: id, title })).result).toEqual({})
    expect((await s.request('session/get', { sessionId: id })).result.session.title).toBe(title)
    s.write(`{"jsonrpc":"2.0","id":3,"method":"session/get","params":{"__proto__":{"polluted":true},"sessionId":"${id}"}}\n`)
    expect((await s.waitFor((f) => f.id === 3, 'the __proto__ answer')).error).toMatchObject({ code: -32602 })
    expect(await s.request('session/frobnicate', {})).toMatchObject({ error: { code: -32601 } })
    expect(await s.request('session/respond', { sessionId: id, requestId: 'r', result: {} })).toMatchObject({ error: { code: -32601 } })
    expect(await s.request('session/get', { sessionId: 'no-such-session' })).toMatchObject({ error: { code: -32002, data: { code: 'SESSION_NOT_FOUND' } } })
    s.send({ jsonrpc: '2.0', id: 424242, result: { decision: 'allow-once' } })
    expect((await s.request('session/get', { sessionId: id })).result.session.id).toBe(id)
    const note = 'ignored an answer to unknown request id 424242'
    // stderr is a pipe of its own: the note can arrive after the next answer on stdout (a CI flake)
    for (const deadline = Date.now() + 10_000; !s.stderr().includes(note) && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 10))
    expect(s.stderr()).toContain(note)
    expect(s.junk).toEqual([])
  })

  it('takes an 8 MiB frame and answers it with -32602, then serves the next frame', async () => {
    const s = sdk()
    const id = await created(s)
    const answer = await s.request('session/rename', { sessionId: id, title: 'x'.repeat(8 * 1024 * 1024) })
    expect(answer.error).toMatchObject({ code: -32602, data: { issues: [expect.objectContaining({ path: 'params.title' })] } })
    expect(JSON.stringify(answer).length).toBeLessThan(4000)
    expect((await s.request('session/get', { sessionId: id })).result.session.id).toBe(id)
  })

  it('answers wrong param types on every method with -32602 naming the field', async () => {
    const s = sdk()
    await created(s)
    const wrong = (schema: { type?: string }) => (schema.type === 'string' ? 12345 : schema.type === 'array' ? 'not a list' : schema.type === 'object' ? 'not an object' : 'not a number')
    const methods = describeRpc().methods.filter((m) => m.carriers?.includes('sdk') && m.name !== 'initialize')
    expect(methods.length).toBe(Object.keys(METHODS).length - 2)
    for (const m of methods) {
      const schema = m.params as { properties?: Record<string, { type?: string }> }
      const props = Object.entries(schema.properties ?? {})
      const params = props.length ? Object.fromEntries(props.map(([k, v]) => [k, wrong(v)])) : { unexpected: true }
      const answer = await s.request(m.name, params)
      expect(answer.error, m.name).toMatchObject({ code: -32602, data: { code: 'INVALID_PARAMS' } })
      const paths = (answer.error.data.issues as { path: string }[]).map((i) => i.path)
      expect(paths.some((p) => p.startsWith('params')), `${m.name}: ${paths.join(', ')}`).toBe(true)
    }
  })

  it('takes an approval answered with an unknown decision as a refusal: the command does not run', async () => {
    world.model.setScript([escalate('approved.txt'), { text: 'Done.', expect: { lastToolResultIncludes: 'did not allow' } }])
    const s = sdk()
    const id = await created(s, { approvals: true })
    await s.request('session/prompt', { sessionId: id, prompt: 'go' })
    const ask = await s.waitFor((f) => f.method === 'approval/request', 'approval/request')
    expect(ask.params).toMatchObject({ sessionId: id, tool: 'bash', kind: 'escalation', options: expect.any(Array) })
    expect(typeof ask.id).toBe('number')
    s.send({ jsonrpc: '2.0', id: ask.id, result: { decision: 'maybe-later' } })
    expect((await s.waitFor(isEvent(id, 'turn/end'), 'turn/end')).params.event.data.reason).toBe('completed')
    expect(existsSync(join(world.workspace, 'approved.txt'))).toBe(false)
    expect(s.stderr()).toContain('invalid answer to approval/request')
    expect(world.model.failures).toEqual([])
  })

  it('keeps a session usable when the client never answers an approval: session/cancel ends the wait', async () => {
    world.model.setScript([escalate('approved.txt'), { text: 'second turn' }])
    const s = sdk()
    const id = await created(s, { approvals: true })
    await s.request('session/prompt', { sessionId: id, prompt: 'go' })
    const ask = await s.waitFor((f) => f.method === 'approval/request', 'approval/request')
    await s.waitFor((f) => f.method === 'session/status' && f.params.status === 'waiting', 'status waiting')
    expect((await s.request('session/cancel', { sessionId: id })).result).toEqual({ cancelled: true })
    const end = await s.waitFor(isEvent(id, 'turn/end'), 'turn/end')
    expect(end.params.event.data.reason).toBe('aborted')
    expect(await s.waitFor((f) => f.method === '$/cancelRequest', '$/cancelRequest')).toMatchObject({ params: { id: ask.id } })
    await s.request('session/prompt', { sessionId: id, prompt: 'again' })
    const next = await s.waitFor(isEvent(id, 'turn/end', end.params.event.seq), 'the second turn/end')
    expect(next.params.event.data.reason).toBe('completed')
    expect(existsSync(join(world.workspace, 'approved.txt'))).toBe(false)
  })

  it('cancels the turn when the client exits mid-turn, exits leaving no child, and the session resumes later', async () => {
    const marker = 'sleep 391.7'
    world.model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: `${marker}; printf late > late.txt` } }] }, { text: 'resumed fine' }])
    const s = sdk()
    const id = await created(s)
    await s.request('session/prompt', { sessionId: id, prompt: 'sleep' })
    await s.waitFor(isEvent(id, 'tool/call'), 'tool/call')
    for (let i = 0; processesMatching(marker).length === 0; i++) {
      if (i > 400) throw new Error('the command never started')
      await new Promise((r) => setTimeout(r, 25))
    }
    s.child.stdin!.end()
    expect(await s.exited).toEqual({ code: 0, signal: null })
    expect(processesMatching(marker)).toEqual([])
    const { events } = readSessionFile(world.home, id)
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
    expect(events.filter((e) => e.type === 'tool/result')).toHaveLength(1)
    expect(existsSync(join(world.workspace, 'late.txt'))).toBe(false)
    await using client = await createClient({ command: DSH_BIN, env: cleanEnv(world.env()), cwd: world.workspace })
    const session = await client.openSession(id)
    expect(await session.run('go on')).toMatchObject({ text: 'resumed fine', reason: 'completed' })
  })

  it('gives the TypeScript client a typed error with the exit signal and stderr tail when the server is killed, without hanging', async () => {
    world.model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 377.1' } }] }])
    await using client = await createClient({ command: DSH_BIN, env: cleanEnv(world.env({ DSH_SDK_DEBUG: '1' })), cwd: world.workspace })
    const session = await client.createSession({ workspace: world.workspace })
    const turn = session.run('sleep')
    for (let i = 0; processesMatching('sleep 377.1').length === 0; i++) {
      if (i > 400) throw new Error('the command never started')
      await new Promise((r) => setTimeout(r, 25))
    }
    process.kill(client.pid!, 'SIGKILL')
    const error = await turn.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TransportClosedError)
    expect(error).toMatchObject({ exitCode: null, signal: 'SIGKILL' })
    expect((error as TransportClosedError).stderrTail).toContain('[sdk]')
    await expect(client.listSessions()).rejects.toBeInstanceOf(TransportClosedError)
    for (const pid of processesMatching('sleep 377.1')) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // bubblewrap's --die-with-parent got there first
      }
    }
  })

  it('prints rpc/describe with --print-schema and refuses unknown arguments', async () => {
    const schema = await runDsh(['sdk', '--print-schema'], { env: world.env() })
    expect(schema.code).toBe(0)
    expect(JSON.parse(schema.stdout)).toEqual(JSON.parse(JSON.stringify(describeRpc())))
    const bad = await runDsh(['sdk', '--bogus'], { env: world.env() })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('USAGE: unknown argument "--bogus" for dsh sdk')
    expect(bad.stdout).toBe('')
  })
})
