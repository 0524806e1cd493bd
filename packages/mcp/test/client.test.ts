import type { ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { alive, fixtureSpec, mcpTree, runCall, startHttpFixture, type Tree } from './helpers.js'

async function mcpTreeUnsettled(config: Record<string, unknown>): Promise<Tree> {
  const t = await mcpTree(config, { settle: false })
  trees.push(t)
  await vi.waitFor(() => expect(t.root.mcp.list().length).toBeGreaterThan(0), { timeout: 10_000 })
  return t
}

const trees: Tree[] = []
const children: ChildProcess[] = []

async function tree(config: Record<string, unknown>, options: Parameters<typeof mcpTree>[1] = {}): Promise<Tree> {
  const t = await mcpTree(config, options)
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

const FIXTURE_TOOLS = ['echo', 'add', 'crash', 'slow', 'media', 'fail', 'pid', 'grow', 'write', 'wipe'].map((t) => `mcp__fx__${t}`)
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

  test('a server that exits mid-call: the call names it, a notice, one restart; a second death leaves tools that answer why', async () => {
    const { root, notices } = await tree({ servers: { fx: fixtureSpec(), other: fixtureSpec() } })
    const session = await root.sessions.create({ cwd: '/' })
    const result = await runCall(root, session, 'mcp__fx__crash', {})
    expect(result).toEqual({
      content: [text('MCP server fx stopped during the call: exited (code 3).\nIts stderr ended with:\nfixture: crashing on purpose')],
      isError: true,
    })
    await root.mcp.settled()
    const died = 'exited (code 3); stderr:\nfixture: crashing on purpose'
    expect(root.mcp.list()).toEqual([
      { name: 'fx', state: 'ready', tools: FIXTURE_TOOLS },
      { name: 'other', state: 'ready', tools: FIXTURE_TOOLS.map((t) => t.replace('fx', 'other')) },
    ])
    expect(notices.map((n) => n.message)).toEqual([
      `MCP server fx stopped: ${died}; restarting it once`,
      'MCP server fx was restarted and is ready again',
    ])
    expect(await runCall(root, session, 'mcp__fx__echo', { text: 'back' })).toEqual({ content: [text('echo: back')], isError: false })

    // The second death is final: the tools stay and say why, not "Unknown tool".
    await runCall(root, session, 'mcp__fx__crash', {})
    await vi.waitFor(() => expect(root.mcp.list()[0]?.state).toBe('failed'), { timeout: 10_000 })
    const final = `${died} (it was restarted once already)`
    expect(root.mcp.list()[0]).toEqual({ name: 'fx', state: 'failed', error: final, tools: FIXTURE_TOOLS })
    expect(notices.map((n) => n.message).slice(2)).toEqual([`MCP server fx stopped: ${final}`])
    expect(await runCall(root, session, 'mcp__fx__echo', { text: 'x' })).toEqual({
      content: [text(`MCP server fx stopped: ${final}. Its tools cannot be used in this run.`)], isError: true,
    })
    // The other server is untouched; the global notices are in the open session's log.
    expect(await runCall(root, session, 'mcp__other__echo', { text: 'still here' })).toEqual({ content: [text('echo: still here')], isError: false })
    expect(session.events.filter((e) => e.type === 'notice').map((e) => e.data)).toEqual(
      notices.map((n) => ({ level: 'warn', message: n.message, source: 'mcp:fx' })),
    )
  })

  test('a crash while idle: a notice in every open session and in sessions opened later; the restart brings the tools back', async () => {
    const { root, notices } = await tree({ servers: { fx: fixtureSpec() } })
    const before = await root.sessions.create({ cwd: '/' })
    const pid = root.mcp.get('fx')!.pid!
    process.kill(pid, 'SIGKILL')
    // the death is noticed, then the restart is awaited (spawning a server may be slow here)
    await vi.waitFor(() => expect(notices.length).toBeGreaterThan(0), { timeout: 10_000 })
    await root.mcp.settled()
    expect(notices).toHaveLength(2)
    expect(alive(pid)).toBe(false)
    const restarted = root.mcp.get('fx')!.pid!
    expect(restarted).not.toBe(pid)
    expect(alive(restarted)).toBe(true)
    const logged = [
      { level: 'warn', message: 'MCP server fx stopped: was killed by SIGKILL; restarting it once', source: 'mcp:fx' },
      { level: 'warn', message: 'MCP server fx was restarted and is ready again', source: 'mcp:fx' },
    ]
    expect(before.events.filter((e) => e.type === 'notice').map((e) => e.data)).toEqual(logged)
    const after = await root.sessions.create({ cwd: '/' })
    expect(after.events.filter((e) => e.type === 'notice').map((e) => e.data)).toEqual(logged)
    expect(await runCall(root, after, 'mcp__fx__echo', { text: 'ok' })).toEqual({ content: [text('echo: ok')], isError: false })
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

  test('a hung server: the start timeout fails it with a reason, its process is killed, the others start', async () => {
    const { root, notices } = await tree({ connectTimeoutMs: 5_000, servers: { hung: { ...fixtureSpec({ FIXTURE_HANG: '1' }), connectTimeoutMs: 300 }, fx: fixtureSpec() } })
    expect(root.mcp.list()).toEqual([
      { name: 'hung', state: 'failed', error: 'could not start: no answer within 0.3 s (start timeout)', tools: [] },
      { name: 'fx', state: 'ready', tools: FIXTURE_TOOLS },
    ])
    expect(notices.map((n) => n.message)).toEqual(['MCP server hung could not start: no answer within 0.3 s (start timeout)'])
    const pid = root.mcp.get('hung')?.pid
    expect(pid).toBeTypeOf('number')
    await vi.waitFor(() => expect(alive(pid!)).toBe(false), { timeout: 10_000 })
  })

  test('the plugin does not wait for its servers: it is up while a server is still starting', async () => {
    const { root } = await mcpTreeUnsettled({ servers: { hung: { ...fixtureSpec({ FIXTURE_HANG: '1' }), connectTimeoutMs: 60_000 } } })
    expect(root.mcp.list()).toEqual([{ name: 'hung', state: 'connecting', tools: [] }])
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
    await root.mcp.settled(a.id)
    expect(a.events.filter((e) => e.type === 'notice').map((e) => e.data)).toEqual([
      { level: 'warn', message: 'MCP server fx stopped: exited (code 3); stderr:\nfixture: crashing on purpose; restarting it once', source: 'mcp:fx' },
      { level: 'warn', message: 'MCP server fx was restarted and is ready again', source: 'mcp:fx' },
    ])
    expect(b.events.filter((e) => e.type === 'notice').map((e) => e.data)).toEqual([
      { level: 'warn', message: 'MCP server fx is already mounted for this session', source: 'mcp:fx' },
    ])
    expect(notices.map((n) => n.sessionId)).toEqual([b.id, a.id, a.id])

    const pid = other.pid!
    expect(alive(pid)).toBe(true)
    await root.mcp.unmountSession(b.id)
    expect(root.tools.names(b.id)).toEqual([])
    expect(other.state).toBe('closed')
    expect(alive(pid)).toBe(false)
    expect(root.mcp.list()).toEqual([{ name: 'fx', sessionId: a.id, state: 'ready', tools: FIXTURE_TOOLS }])
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

describe('MCP tools under the permission preset (no one to approve, as in headless)', () => {
  const scratch = () => mkdtempSync(join(tmpdir(), 'dsh-mcp-gate-'))

  test('read-only: a tool not annotated readOnlyHint is denied with the reason and writes nothing; a read-only tool runs', async () => {
    const dir = scratch()
    const { root } = await tree({ servers: { fx: fixtureSpec() } }, { permission: 'read-only' })
    const session = await root.sessions.create({ cwd: dir })
    const file = join(dir, 'out.txt')
    expect(await runCall(root, session, 'mcp__fx__write', { path: file, text: 'x' }, undefined, 'ask')).toEqual({
      content: [text('Not run: it needs approval (the session is read-only and the MCP tool write of server fx is not annotated readOnlyHint: true (dsh cannot sandbox an MCP server)), and no one can approve on this surface (a headless run denies what needs approval).')],
      isError: true,
    })
    expect(existsSync(file)).toBe(false)
    expect(await runCall(root, session, 'mcp__fx__add', { a: 1, b: 2 }, undefined, 'ask')).toEqual({ content: [text('3')], isError: false })
  })

  test('workspace-write: an unannotated tool runs; a destructiveHint tool is denied and the file stays', async () => {
    const dir = scratch()
    const { root } = await tree({ servers: { fx: fixtureSpec() } }, { permission: 'workspace-write' })
    const session = await root.sessions.create({ cwd: dir })
    const file = join(dir, 'keep.txt')
    expect(await runCall(root, session, 'mcp__fx__write', { path: file, text: 'kept' }, undefined, 'ask')).toEqual({ content: [text(`wrote ${file}`)], isError: false })
    const wiped = await runCall(root, session, 'mcp__fx__wipe', { path: file }, undefined, 'ask')
    expect(wiped.isError).toBe(true)
    expect(wiped.content).toEqual([text('Not run: it needs approval (the MCP tool wipe of server fx is annotated destructiveHint: true), and no one can approve on this surface (a headless run denies what needs approval).')])
    expect(readFileSync(file, 'utf8')).toBe('kept')
  })

  test('a trusted server skips the preset: read-only writes through it', async () => {
    const dir = scratch()
    const { root } = await tree({ servers: { fx: { ...fixtureSpec(), trusted: true } } }, { permission: 'read-only' })
    expect(root.mcp.list()).toEqual([{ name: 'fx', state: 'ready', trusted: true, tools: FIXTURE_TOOLS }])
    const session = await root.sessions.create({ cwd: dir })
    const file = join(dir, 'trusted.txt')
    expect(await runCall(root, session, 'mcp__fx__write', { path: file, text: 't' }, undefined, 'ask')).toEqual({ content: [text(`wrote ${file}`)], isError: false })
    expect(readFileSync(file, 'utf8')).toBe('t')
  })
})

describe('/status lines', () => {
  test('each server the session sees, by name: state, tool count, trusted, or why it failed', async () => {
    const { root } = await tree({ servers: { zeta: { ...fixtureSpec(), trusted: true }, ghost: { command: 'dsh-no-such-mcp-server' } } })
    const session = await root.sessions.create({ cwd: '/' })
    await root.mcp.mount('mine', { ...fixtureSpec(), trusted: true }, { sessionId: session.id })
    expect(root.mcp.statusLines(session.id)).toEqual([
      'ghost: failed (could not start: command not found: dsh-no-such-mcp-server)',
      'mine: ready, 10 tools, trusted',
      'zeta: ready, 10 tools, trusted',
    ])
    expect(root.mcp.statusLines('another-session')).toHaveLength(2)
  })
})
