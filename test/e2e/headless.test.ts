import { deriveMessages } from '@dsh/core'
import { buildChatRequest } from '@dsh/llm-openai'
import { buildMessagesRequest } from '@dsh/llm-anthropic'
import { expectedBodies, requestsFromLog } from '@dsh/testkit'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { collect, waitForOutput } from './helpers/dsh.js'
import { processesMatching, readSessionFile, sessionIdOf } from './helpers/session-file.js'
import { killMidTool, useDshWorld } from './helpers/world.js'

// Every request any dsh run of a test sent is what a stored session log derives (logsCheck);
// the 401 test checks that the API key is never printed.
const world = useDshWorld({ logsCheck: true, apiKey: 'mock-key' })

/** Every request the mock recorded equals header + derived history from the log on disk. */
function expectRequestsMatchLog(id: string) {
  const { events } = readSessionFile(world.home, id)
  expect(world.model.requests.map((r) => r.body)).toEqual(expectedBodies(requestsFromLog(events, deriveMessages), buildChatRequest))
}

function noStackTrace(text: string) {
  expect(text).not.toMatch(/\n\s+at .+:\d+:\d+/)
}

describe('headless', () => {
  it('runs real tool calls in the workspace and prints the final answer', async () => {
    world.model.setScript([
      { toolCalls: [{ name: 'write', arguments: { path: 'notes/hello.txt', content: 'written by dsh\n' } }] },
      { toolCalls: [{ name: 'read', arguments: { path: 'notes/hello.txt' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'wc -c notes/hello.txt && exit 3', description: 'count bytes' } }] },
      { text: 'All done.' },
    ])
    const result = await world.headless(['create the note'])
    expect(result.code).toBe(0)
    expect(result.stdout).toBe('All done.\n')
    const id = sessionIdOf(result.stderr)
    expect(result.stderr).toContain('→ write: ')
    expect(result.stderr).toContain('→ bash: wc -c notes/hello.txt && exit 3')
    // the world: the file is really there
    expect(readFileSync(join(world.workspace, 'notes/hello.txt'), 'utf8')).toBe('written by dsh\n')
    // the read output and the exit marker reached the model
    const toolMessages = (world.model.requests[2]!.body as { messages: { role: string; content: string }[] }).messages.filter((m) => m.role === 'tool')
    expect(toolMessages.at(-1)!.content).toContain('written by dsh')
    const last = (world.model.requests[3]!.body as { messages: { role: string; content: string }[] }).messages.at(-1)!
    expect(last).toMatchObject({ role: 'tool' })
    expect(last.content).toMatch(/15 notes\/hello.txt\n\[exit code: 3\]$/)
    expectRequestsMatchLog(id)
    const { events } = readSessionFile(world.home, id)
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { turn: 1, reason: 'completed' } })
  })

  it('fails before any request when no key is configured, saying how to fix it', async () => {
    const result = await world.headless(['hello'], { env: { DEEPSEEK_API_KEY: undefined } })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain('NO_CREDENTIALS: no API key for provider "deepseek"')
    expect(result.stderr).toMatch(/dsh login --provider deepseek|DEEPSEEK_API_KEY/)
    expect(world.model.requests).toHaveLength(0)
    noStackTrace(result.stderr)
  })

  it('reads the task from stdin with "-" and streams events as NDJSON with --json', async () => {
    world.model.setScript([{ text: 'from stdin', expect: { lastUserTextIncludes: 'piped task' } }])
    const result = await world.headless(['--json', '-'], { input: 'the piped task\n' })
    expect(result.code).toBe(0)
    const events = result.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; seq: number })
    // every event of the run, from the first (the permission preset) on
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i))
    expect(events[0]).toMatchObject({ type: 'permission/preset', data: { preset: 'workspace-write' } })
    expect(events.map((e) => e.type)).toContain('assistant/message')
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
  })

  it('retries a 429 (logged) and completes', async () => {
    world.model.setScript([{ error: { status: 429, retryAfter: 0 } }, { text: 'after retry' }])
    const result = await world.headless(['go'])
    expect(result.code).toBe(0)
    expect(result.stdout).toBe('after retry\n')
    expect(result.stderr).toContain('RATE_LIMIT: retrying')
    const id = sessionIdOf(result.stderr)
    expect(readSessionFile(world.home, id).events.filter((e) => e.type === 'llm/retry')).toHaveLength(1)
    expectRequestsMatchLog(id)
  })

  it('reports a provider 401 as an auth error naming the provider', async () => {
    world.model.setScript([{ error: { status: 401, message: 'invalid key' } }])
    const result = await world.headless(['go'])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/AUTH: .*deepseek/)
    expect(result.stderr).not.toContain('mock-key')
    noStackTrace(result.stderr)
  })

  it.each([['malformed'], ['cut']] as const)('exits cleanly on a %s stream and leaves the session intact', async (fault) => {
    world.model.setScript([{ fault }, { fault }, { fault }, { fault }, { fault }])
    const result = await world.headless(['go'])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/(MALFORMED_RESPONSE|TRANSPORT): /)
    noStackTrace(result.stderr)
    const id = sessionIdOf(result.stderr)
    const { events } = readSessionFile(world.home, id)
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'error' } })
    world.model.setScript([{ text: 'resumed fine' }])
    const resumed = await world.headless(['--resume', id, 'again'])
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toBe('resumed fine\n')
  })

  it('gives the model an error result for an unknown tool and goes on', async () => {
    world.model.setScript([{ toolCalls: [{ name: 'teleport', arguments: {} }] }, { text: 'ok' }])
    const result = await world.headless(['go'])
    expect(result.code).toBe(0)
    const tool = (world.model.requests[1]!.body as { messages: { role: string; content: string }[] }).messages.at(-1)!
    expect(tool.content).toContain('Unknown tool "teleport"')
  })

  it('cancels on SIGINT mid-tool: exit 130, abort logged, the tool process group gone', async () => {
    const marker = `sleep ${4000 + Math.floor(Math.random() * 999)}`
    world.model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: `${marker}; echo never` } }] }])
    const child = world.spawn(['--profile', 'headless', 'wait'])
    const done = collect(child)
    await waitForOutput(child.stderr!, (t) => t.includes('→ bash'))
    await until(() => processesMatching(marker).length > 0)
    child.kill('SIGINT')
    const result = await done
    expect(result.code).toBe(130)
    const id = sessionIdOf(result.stderr)
    const { events } = readSessionFile(world.home, id)
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
    expect(events.filter((e) => e.type === 'tool/result')).toHaveLength(1)
    await until(() => processesMatching(marker).length === 0)
  })

  it('repairs a session killed with -9 mid-tool and continues it with --resume', async () => {
    const marker = `sleep ${5000 + Math.floor(Math.random() * 999)}`
    const id = await killMidTool(world, marker, (started) => until(() => readSessionFile(world.home, started).events.some((e) => e.type === 'tool/call')))
    world.model.setScript([{ text: 'continued after the crash' }])
    const resumed = await world.headless(['--resume', id, 'go on'])
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toBe('continued after the crash\n')
    const { events } = readSessionFile(world.home, id)
    const types = events.map((e) => e.type)
    const firstEnd = types.indexOf('turn/end')
    expect(events[firstEnd]).toMatchObject({ data: { turn: 1, reason: 'interrupted' } })
    expect(events.find((e) => e.type === 'tool/result')).toMatchObject({ data: { isError: true, synthetic: true } })
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { turn: 2, reason: 'completed' } })
    expectRequestsMatchLog(id)
  })

  it('refuses a second process on a session that another process is writing', async () => {
    world.model.setScript([{ fault: 'stall' }])
    const child = world.spawn(['--profile', 'headless', 'hold it'])
    const done = collect(child)
    const stderr = await waitForOutput(child.stderr!, (t) => t.startsWith('session: '))
    const id = sessionIdOf(stderr)
    const second = await world.headless(['--resume', id, 'me too'])
    expect(second.code).not.toBe(0)
    expect(second.stderr).toContain('SESSION_LOCKED')
    noStackTrace(second.stderr)
    child.kill('SIGINT')
    expect((await done).code).toBe(130)
  })

  it('speaks Anthropic Messages with --provider anthropic (thinking and tool_use included)', async () => {
    world.model.setScript([
      { reasoning: 'I should list files.', toolCalls: [{ name: 'ls', arguments: {} }] },
      { text: 'listed' },
    ])
    const result = await world.headless(['--provider', 'anthropic', 'list the files'], {
      env: { ANTHROPIC_BASE_URL: world.model.url, ANTHROPIC_API_KEY: 'mock-anthropic', DEEPSEEK_API_KEY: undefined },
    })
    expect(result.code).toBe(0)
    expect(result.stdout).toBe('listed\n')
    expect(world.model.requests.map((r) => r.protocol)).toEqual(['anthropic', 'anthropic'])
    expect(world.model.requests[0]!.headers['x-api-key']).toBe('<redacted>')
    const { events } = readSessionFile(world.home, sessionIdOf(result.stderr))
    expect(world.model.requests.map((r) => r.body)).toEqual(expectedBodies(requestsFromLog(events, deriveMessages), buildMessagesRequest))
  })

  it('resumes a pre-release (v0) log: migrated with a note, working in the current directory, never in "/"', async () => {
    const dir = join(world.home, 'sessions')
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'legacy.jsonl'), [
      { type: 'turn/start', time: 1, data: { turn: 1 } },
      { type: 'user/message', time: 2, data: { id: 'u1', content: [{ type: 'text', text: 'old question' }] } },
      { type: 'assistant/message', time: 3, data: { id: '1:1', content: [{ type: 'text', text: 'old answer' }], finish: 'stop' } },
      { type: 'turn/end', time: 4, data: { turn: 1, reason: 'completed' } },
    ].map((e) => JSON.stringify(e)).join('\n') + '\n')
    world.model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: 'pwd; touch here.txt' } }] }, { text: 'continued' }])
    const result = await world.headless(['--resume', 'legacy', 'continue'])
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stderr.split('\n')
    expect(lines[0]).toBe('session: legacy')
    expect(lines[1]).toMatch(/^note: .*v0.*/)
    expect(existsSync(join(dir, 'legacy.jsonl.v0.bak'))).toBe(true)
    expect((world.model.requests[1]!.body as { messages: { role: string; content: string }[] }).messages.at(-1)!.content).toBe(world.workspace)
    expect(existsSync(join(world.workspace, 'here.txt'))).toBe(true)
    expect((world.model.requests[0]!.body as { messages: { role: string; content: string }[] }).messages.slice(1, 3).map((m) => m.content)).toEqual(['old question', 'old answer'])
  })

  it('rejects bad arguments with a usage error', async () => {
    const result = await world.headless(['--max-tokens', 'lots', 'task'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('USAGE: --max-tokens must be a positive integer')
    expect(existsSync(join(world.home, 'sessions'))).toBe(false)
  })

  it('an unknown --provider or --agent is a usage error (exit 2) naming the accepted values, and no model request is made', async () => {
    const provider = await world.headless(['--provider', 'nosuch', 'task'])
    expect([provider.code, provider.stderr]).toEqual([2, 'UNKNOWN_PROVIDER: unknown provider "nosuch"\n  hint: known providers: deepseek, openai, anthropic\n'])
    const agent = await world.headless(['--agent', 'nosuch', 'task'])
    expect(agent.code).toBe(2)
    expect(agent.stderr).toMatch(/^UNKNOWN_AGENT_PRESET: unknown agent preset "nosuch"\n  hint: choose one of: standard, /)
    expect(world.model.requests).toHaveLength(0)
  })
})

async function until(predicate: () => boolean, timeoutMs = 15_000): Promise<void> {
  const start = Date.now()
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not reached in time')
    await new Promise((r) => setTimeout(r, 25))
  }
}

