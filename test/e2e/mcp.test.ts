import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from './helpers/dsh.js'
import { processesMatching, readSessionFile, sessionIdOf } from './helpers/session-file.js'
import { useDshWorld } from './helpers/world.js'

// MCP servers driven by the built dsh and the scripted model: the fixture server (SDK,
// stdio) in packages/mcp/test/fixtures, mounted through a --patch of the `mcp` row.
const FIXTURE = join(ROOT, 'packages', 'mcp', 'test', 'fixtures', 'server.mjs')

const world = useDshWorld({ logsCheck: true })

type Server = { command: string; args?: string[]; env?: Record<string, string>; trusted?: boolean; connectTimeoutMs?: number }
const fixture = (env: Record<string, string> = {}, extra: Partial<Server> = {}): Server => ({ command: process.execPath, args: [FIXTURE], env, ...extra })

/** A patch file mounting `servers` on the `mcp` row (a marker env keeps each test's processes findable). */
function patchWith(servers: Record<string, Server>, config: Record<string, unknown> = {}): string {
  const file = join(world.home, 'mcp.patch.yml')
  writeFileSync(file, `- id: mcp\n  config: ${JSON.stringify({ ...config, servers })}\n`)
  return file
}

const headless = (patch: string, args: string[]) => world.headless(['--patch', patch, ...args], { timeoutMs: 60_000 })

const results = (id: string) => readSessionFile(world.home, id).events.filter((e) => e.type === 'tool/result').map((e) => {
  const { content, isError } = e.data as { content: { text: string }[]; isError: boolean }
  return { content, isError }
})
const notices = (id: string) => readSessionFile(world.home, id).events.filter((e) => e.type === 'notice').map((e) => (e.data as { message: string }).message)

describe('MCP tools obey the permission preset (headless: ask means deny, with the reason)', () => {
  it('read-only: an unannotated write_file-like tool is denied and writes nothing; a readOnlyHint tool runs', async () => {
    const target = join(world.workspace, 'written.txt')
    world.model.setScript([
      { toolCalls: [{ id: 'w', name: 'mcp__fs__write', arguments: { path: target, text: 'leak' } }, { id: 'a', name: 'mcp__fs__add', arguments: { a: 2, b: 3 } }] },
      { text: 'done' },
    ])
    const result = await headless(patchWith({ fs: fixture() }), ['--permission-mode', 'read-only', 'write it'])
    expect(result.code).toBe(0)
    expect(existsSync(target)).toBe(false)
    const id = sessionIdOf(result.stderr)
    const [write, add] = results(id)
    expect(write).toEqual({ isError: true, content: [{ type: 'text', text: expect.stringContaining('Not run: it needs approval (the session is read-only and the MCP tool write of server fs is not annotated readOnlyHint: true') }] })
    expect(add).toEqual({ isError: false, content: [{ type: 'text', text: '5' }] })
    const decisions = readSessionFile(world.home, id).events.filter((e) => e.type === 'approval/decision').map((e) => (e.data as { outcome: string }).outcome)
    expect(decisions).toEqual(['reject'])
  })

  it('workspace-write: the unannotated write runs; a destructiveHint tool is denied and the file survives', async () => {
    const target = join(world.workspace, 'kept.txt')
    world.model.setScript([
      { toolCalls: [{ id: 'w', name: 'mcp__fs__write', arguments: { path: target, text: 'kept' } }] },
      { toolCalls: [{ id: 'd', name: 'mcp__fs__wipe', arguments: { path: target } }] },
      { text: 'done' },
    ])
    const result = await headless(patchWith({ fs: fixture() }), ['--permission-mode', 'workspace-write', 'write then wipe'])
    expect(result.code).toBe(0)
    expect(readFileSync(target, 'utf8')).toBe('kept')
    const [write, wipe] = results(sessionIdOf(result.stderr))
    expect(write).toEqual({ isError: false, content: [{ type: 'text', text: `wrote ${target}` }] })
    expect(wipe?.isError).toBe(true)
    expect(wipe?.content[0]?.text).toContain('the MCP tool wipe of server fs is annotated destructiveHint: true')
  })

  it('a trusted server skips it (the write happens under read-only) and /status says so', async () => {
    const target = join(world.workspace, 'trusted.txt')
    world.model.setScript([{ toolCalls: [{ id: 'w', name: 'mcp__fs__write', arguments: { path: target, text: 'ok' } }] }, { text: 'done' }])
    const patch = patchWith({ fs: fixture({}, { trusted: true }), other: fixture() })
    const result = await headless(patch, ['--permission-mode', 'read-only', 'write it'])
    expect(result.code).toBe(0)
    expect(readFileSync(target, 'utf8')).toBe('ok')
    const status = await headless(patch, ['/status'])
    expect(status.code).toBe(0)
    // a slash command runs no model step, so the servers may still be starting
    expect(status.stdout).toMatch(/^mcp\s+fs: (starting|ready, 10 tools), trusted$/m)
    expect(status.stdout).toMatch(/^\s+other: (starting|ready, 10 tools)$/m)
  })
})

describe('MCP failures are visible and bounded', () => {
  it('a missing command: a notice in the log, the --json stream and the system prompt; the run goes on', async () => {
    world.model.setScript([{ text: 'went on without it' }])
    const result = await headless(patchWith({ ghost: { command: 'dsh-no-such-mcp-server' } }), ['--json', 'hello'])
    expect(result.code).toBe(0)
    const message = 'MCP server ghost could not start: command not found: dsh-no-such-mcp-server'
    const streamed = result.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; data: { message?: string } })
    expect(streamed.filter((e) => e.type === 'notice').map((e) => e.data.message)).toEqual([message])
    const id = sessionIdOf(result.stderr)
    expect(notices(id)).toEqual([message])
    const system = (world.model.requests[0]!.body as { messages: { role: string; content: string }[] }).messages[0]!
    expect(system.content).toContain('MCP servers that are not available (their tools fail or are missing):\n- ghost: stopped (could not start: command not found: dsh-no-such-mcp-server)')
  })

  it('a hung server: failed after its start timeout with a notice; its process does not outlive the run', async () => {
    const marker = `dsh-hang-${process.pid}-${Date.now()}`
    world.model.setScript([{ text: 'no tools needed' }])
    const result = await headless(patchWith({ hung: fixture({ FIXTURE_HANG: '1' }, { args: [FIXTURE, marker] }) }, { connectTimeoutMs: 1500 }), ['hello'])
    expect(result.code).toBe(0)
    expect(notices(sessionIdOf(result.stderr))).toEqual(['MCP server hung could not start: no answer within 1.5 s (start timeout)'])
    // shown once, as a note after `session: <id>`
    expect(result.stderr.split('MCP server hung could not start').length).toBe(2)
    expect(result.stderr).toContain('note: MCP server hung could not start: no answer within 1.5 s (start timeout)')
    expect(processesMatching(marker)).toEqual([])
  })

  it('a crash while idle: a notice, one restart, and the tools answer again', async () => {
    const flag = join(world.home, 'died-once')
    world.model.setScript([
      { toolCalls: [{ id: 's', name: 'bash', arguments: { command: `while [ ! -e ${flag} ]; do sleep 0.1; done; sleep 0.3`, description: 'wait for the crash' } }] },
      { toolCalls: [{ id: 'e', name: 'mcp__fx__echo', arguments: { text: 'back' } }] },
      { text: 'done' },
    ])
    const result = await headless(patchWith({ fx: fixture({ FIXTURE_DIE_ONCE: flag }) }), ['--permission-mode', 'danger-full-access', 'wait'])
    expect(result.code).toBe(0)
    const id = sessionIdOf(result.stderr)
    expect(notices(id)).toEqual([
      'MCP server fx stopped: exited (code 4); stderr:\nfixture: dying while idle; restarting it once',
      'MCP server fx was restarted and is ready again',
    ])
    expect(results(id)[1]).toEqual({ isError: false, content: [{ type: 'text', text: 'echo: back' }] })
  })
})
