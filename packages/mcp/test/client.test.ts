import type { ChildProcess } from 'node:child_process'
import { createServer, type AddressInfo } from 'node:net'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { alive, fixtureSpec, mcpTree, runCall, startHttpFixture, type Tree } from './helpers.js'

const trees: Tree[] = []
const children: ChildProcess[] = []

async function tree(config: Record<string, unknown>): Promise<Tree> {
  const t = await mcpTree(config)
  trees.push(t)
  return t
}

afterEach(async () => {
  for (const t of trees.splice(0)) await t.dispose()
  for (const child of children.splice(0)) child.kill('SIGKILL')
})

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

const FIXTURE_TOOLS = ['echo', 'add', 'crash', 'slow', 'media', 'fail', 'pid', 'grow'].map((t) => `mcp__fx__${t}`)
const text = (t: string) => ({ type: 'text', text: t })

describe('stdio server from config', () => {
  test('tools are registered as mcp__<server>__<tool> with the server\'s JSON Schema, and calls round-trip', async () => {
    const { root } = await tree({ servers: { fx: fixtureSpec() } })
    expect(root.mcp.list()).toEqual([{ name: 'fx', state: 'ready', tools: FIXTURE_TOOLS }])
    expect(root.tools.schemas((n) => n === 'mcp__fx__echo' || n === 'mcp__fx__slow')).toEqual([
      {
        name: 'mcp__fx__echo',
        description: 'Echoes its text.',
        parameters: { type: 'object', properties: { text: { type: 'string', description: 'What to echo' } }, required: ['text'] },
      },
      {
        name: 'mcp__fx__slow',
        description: 'Answers after `ms` milliseconds.',
        parameters: { type: 'object', properties: { ms: { type: 'integer', minimum: 0 } }, required: ['ms'] },
      },
    ])
    // readOnlyHint → may run in parallel with other concurrency-safe calls.
    expect(root.tools.get('mcp__fx__add')?.concurrencySafe).toBe(true)
    expect(root.tools.get('mcp__fx__echo')?.concurrencySafe).toBe(false)

    const session = await root.sessions.create({ cwd: '/' })
    expect(await runCall(root, session, 'mcp__fx__echo', { text: 'hi' })).toEqual({ content: [text('echo: hi')], isError: false })
    expect(await runCall(root, session, 'mcp__fx__add', { a: 2, b: 40 })).toEqual({ content: [text('42')], isError: false })
  })

  test('arguments are validated against the server schema before anything is sent', async () => {
    const { root } = await tree({ servers: { fx: fixtureSpec() } })
    const session = await root.sessions.create({ cwd: '/' })
    expect(await runCall(root, session, 'mcp__fx__add', { a: 1.5, b: 'x' })).toEqual({
      content: [text('Invalid arguments for mcp__fx__add: (root): arguments/a must be integer, arguments/b must be integer. Fix them and call again.')],
      isError: true,
    })
    // That is the pipeline's own validation message: the server (whose SDK answers
    // "Input validation error: …") never saw the call.
  })

  test('MCP content maps to tool content; isError maps to an error result', async () => {
    const { root } = await tree({ servers: { fx: fixtureSpec() } })
    const session = await root.sessions.create({ cwd: '/' })
    expect(await runCall(root, session, 'mcp__fx__media', {})).toEqual({
      content: [
        text('caption'),
        { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
        text('Resource file:///notes.txt:\nnote body'),
        text('[resource link: file:///big.bin "big.bin" (application/octet-stream)]'),
      ],
      isError: false,
    })
    expect(await runCall(root, session, 'mcp__fx__fail', {})).toEqual({ content: [text('it went wrong')], isError: true })
  })

  test('a server that exits mid-call: error result naming it, a notice, tools unregistered, state failed', async () => {
    const { root, notices } = await tree({ servers: { fx: fixtureSpec(), other: fixtureSpec() } })
    const session = await root.sessions.create({ cwd: '/' })
    const result = await runCall(root, session, 'mcp__fx__crash', {})
    expect(result).toEqual({
      content: [text('MCP server fx exited (code 3) during the call; its tools are no longer available.\nIts stderr ended with:\nfixture: crashing on purpose')],
      isError: true,
    })
    await vi.waitFor(() => expect(root.mcp.list()[0]?.state).toBe('failed'))
    expect(root.mcp.list()).toEqual([
      { name: 'fx', state: 'failed', error: 'exited (code 3); stderr:\nfixture: crashing on purpose', tools: [] },
      { name: 'other', state: 'ready', tools: FIXTURE_TOOLS.map((t) => t.replace('fx', 'other')) },
    ])
    expect(notices).toEqual([{ server: 'fx', level: 'warn', message: 'MCP server fx exited (code 3); stderr:\nfixture: crashing on purpose' }])
    expect(root.tools.names().filter((n) => n.startsWith('mcp__fx__'))).toEqual([])
    // The session goes on: the other server still answers.
    expect(await runCall(root, session, 'mcp__other__echo', { text: 'still here' })).toEqual({ content: [text('echo: still here')], isError: false })
    expect(await runCall(root, session, 'mcp__fx__echo', { text: 'x' })).toEqual({
      content: [text('Unknown tool "mcp__fx__echo". Use one of the tools listed in your instructions.')], isError: true,
    })
  })

  test('a call that outlives the timeout is cancelled with a message naming the server', async () => {
    const { root } = await tree({ servers: { fx: { ...fixtureSpec(), timeoutMs: 200 } } })
    const session = await root.sessions.create({ cwd: '/' })
    expect(await runCall(root, session, 'mcp__fx__slow', { ms: 30_000 })).toEqual({
      content: [text('MCP server fx did not answer within 0.2 s; the call was cancelled.')], isError: true,
    })
    expect(await runCall(root, session, 'mcp__fx__slow', { ms: 1 })).toEqual({ content: [text('slept 1 ms')], isError: false })
  })

  test('an aborted call is reported as cancelled and the server stays ready', async () => {
    const { root } = await tree({ servers: { fx: fixtureSpec() } })
    const session = await root.sessions.create({ cwd: '/' })
    const abort = new AbortController()
    const pending = runCall(root, session, 'mcp__fx__slow', { ms: 30_000 }, abort.signal)
    await vi.waitFor(() => expect(session.events.some((e) => e.type === 'tool/call')).toBe(true))
    abort.abort()
    expect(await pending).toEqual({ content: [text('Cancelled: the user stopped this call.')], isError: true })
    expect(root.mcp.list()[0]?.state).toBe('ready')
  })

  test('a server whose tool list changes is re-listed', async () => {
    const { root } = await tree({ servers: { fx: fixtureSpec() } })
    const session = await root.sessions.create({ cwd: '/' })
    await runCall(root, session, 'mcp__fx__grow', {})
    await vi.waitFor(() => expect(root.tools.get('mcp__fx__extra')).toBeDefined())
    expect(await runCall(root, session, 'mcp__fx__extra', {})).toEqual({ content: [text('extra ran')], isError: false })
  })
})

describe('servers that cannot start', () => {
  test('a missing command: failed state, a notice, and the plugin stays up with the other servers', async () => {
    const { root, notices } = await tree({ servers: { ghost: { command: 'dsh-no-such-mcp-server' }, fx: fixtureSpec() } })
    expect(root.mcp.list()).toEqual([
      { name: 'ghost', state: 'failed', error: 'could not start: command not found: dsh-no-such-mcp-server', tools: [] },
      { name: 'fx', state: 'ready', tools: FIXTURE_TOOLS },
    ])
    expect(notices).toEqual([{ server: 'ghost', level: 'warn', message: 'MCP server ghost could not start: command not found: dsh-no-such-mcp-server' }])
  })

  test('a server that exits before initialize: its stderr is in the reason', async () => {
    const { root } = await tree({ servers: { broken: fixtureSpec({ FIXTURE_FAIL_START: '1' }) } })
    expect(root.mcp.list()).toEqual([
      { name: 'broken', state: 'failed', error: 'could not start: exited (code 2); stderr:\nfixture: missing API token, giving up', tools: [] },
    ])
  })

  test('stderr kept for messages is bounded', async () => {
    const { root } = await tree({ stderrLimit: 10, servers: { broken: fixtureSpec({ FIXTURE_FAIL_START: '1' }) } })
    expect(root.mcp.list()[0]?.error).toBe('could not start: exited (code 2); stderr:\n…giving up')
  })

  test('an HTTP server that is not there', async () => {
    const port = await closedPort()
    const { root, notices } = await tree({ servers: { web: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } } })
    const error = `could not start: fetch failed (connect ECONNREFUSED 127.0.0.1:${port})`
    expect(root.mcp.list()).toEqual([{ name: 'web', state: 'failed', error, tools: [] }])
    expect(notices).toEqual([{ server: 'web', level: 'warn', message: `MCP server web ${error}` }])
  })
})

describe('streamable HTTP server', () => {
  test('tools register and calls round-trip', async () => {
    const { url, child } = await startHttpFixture()
    children.push(child)
    const { root } = await tree({ servers: { web: { type: 'http', url } } })
    expect(root.mcp.list()).toEqual([{ name: 'web', state: 'ready', tools: FIXTURE_TOOLS.map((t) => t.replace('fx', 'web')) }])
    const session = await root.sessions.create({ cwd: '/' })
    expect(await runCall(root, session, 'mcp__web__echo', { text: 'over http' })).toEqual({ content: [text('echo: over http')], isError: false })
  })

  test('a server that went away: the call is an error result naming it, not a hang', async () => {
    const { url, child } = await startHttpFixture()
    children.push(child)
    const { root } = await tree({ servers: { web: { type: 'http', url } } })
    const session = await root.sessions.create({ cwd: '/' })
    const gone = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await gone
    expect(await runCall(root, session, 'mcp__web__echo', { text: 'anyone?' })).toEqual({
      content: [text(`MCP server web failed the call: fetch failed (connect ECONNREFUSED ${new URL(url).host})`)], isError: true,
    })
  })
})

describe('per-session servers', () => {
  test('mount for a session: tools visible to it alone; a crash is a notice in that session; unmountSession cleans up', async () => {
    const { root, notices } = await tree({})
    const a = await root.sessions.create({ cwd: '/' })
    const b = await root.sessions.create({ cwd: '/' })
    const connection = await root.mcp.mount('fx', fixtureSpec(), { sessionId: a.id })
    expect(connection.state).toBe('ready')
    expect(root.tools.names(a.id)).toEqual(FIXTURE_TOOLS)
    expect(root.tools.names(b.id)).toEqual([])
    expect(root.tools.names()).toEqual([])
    expect(await runCall(root, a, 'mcp__fx__echo', { text: 'mine' })).toEqual({ content: [text('echo: mine')], isError: false })
    expect((await runCall(root, b, 'mcp__fx__echo', { text: 'yours?' })).isError).toBe(true)

    // The same name may be mounted for another session; not twice for the same one.
    const other = await root.mcp.mount('fx', fixtureSpec(), { sessionId: b.id })
    expect(other.state).toBe('ready')
    const twin = await root.mcp.mount('fx', fixtureSpec(), { sessionId: b.id })
    expect(twin.info()).toEqual({ name: 'fx', sessionId: b.id, state: 'failed', error: 'is already mounted for this session', tools: [] })

    await runCall(root, a, 'mcp__fx__crash', {})
    await vi.waitFor(() => expect(a.events.some((e) => e.type === 'notice')).toBe(true))
    expect(a.events.filter((e) => e.type === 'notice').map((e) => e.data)).toEqual([
      { level: 'warn', message: 'MCP server fx exited (code 3); stderr:\nfixture: crashing on purpose', source: 'mcp:fx' },
    ])
    expect(b.events.filter((e) => e.type === 'notice').map((e) => e.data)).toEqual([
      { level: 'warn', message: 'MCP server fx is already mounted for this session', source: 'mcp:fx' },
    ])
    expect(notices.map((n) => n.sessionId)).toEqual([b.id, a.id])

    const pid = other.pid!
    expect(alive(pid)).toBe(true)
    await root.mcp.unmountSession(b.id)
    expect(root.tools.names(b.id)).toEqual([])
    expect(other.state).toBe('closed')
    expect(alive(pid)).toBe(false)
    expect(root.mcp.list()).toEqual([
      { name: 'fx', sessionId: a.id, state: 'failed', error: 'exited (code 3); stderr:\nfixture: crashing on purpose', tools: [] },
    ])
  })

  test('an invalid spec is a failed mount, not an exception', async () => {
    const { root } = await tree({})
    const connection = await root.mcp.mount('bad', { type: 'http', url: 'not a url' } as never, { sessionId: 's1' })
    expect(connection.info()).toEqual({ name: 'bad', sessionId: 's1', state: 'failed', error: 'has an invalid configuration: url: Invalid URL', tools: [] })
  })
})

describe('disposal', () => {
  test('disposing the plugin closes every server and leaves no process behind', async () => {
    const t = await mcpTree({ servers: { fx: fixtureSpec() } })
    const { root } = t
    const session = await root.sessions.create({ cwd: '/' })
    const scoped = await root.mcp.mount('own', fixtureSpec(), { sessionId: session.id })
    const reported = await runCall(root, session, 'mcp__fx__pid', { child: true })
    const pids = JSON.parse((reported.content[0] as { text: string }).text) as { server: number; child: number }
    const all = [pids.server, pids.child, scoped.pid!]
    expect(all.map(alive)).toEqual([true, true, true])
    await t.dispose()
    expect(all.map(alive)).toEqual([false, false, false])
    expect(root.tools.names(session.id)).toEqual([])
  })
})
