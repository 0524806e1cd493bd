// `dsh --profile acp`: MCP servers per session, auth methods (browser page, gateway),
// slash commands, images, steering, modes and config options — against the built binary.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from './helpers/dsh.js'
import { processesMatching } from './helpers/session-file.js'
import { acpEnv, type AcpProcess, rpcError, sessionUpdates, until, useAcpSuite } from './helpers/acp.js'

const suite = useAcpSuite()

const ask = (p: AcpProcess, sessionId: string, text: string) => p.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })
const newSession = async (p: AcpProcess) => (await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [] })).sessionId
const texts = (p: AcpProcess, sessionId: string) => sessionUpdates(p, sessionId).filter((u) => u.sessionUpdate === 'agent_message_chunk').map((u) => (u as { content: { text: string } }).content.text).join('')

/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

describe('dsh --profile acp: MCP servers per session', () => {
  it('mounts stdio servers as mcp__<server>__<tool>; a broken one is a notice, never fatal', async () => {
    const fixture = join(ROOT, 'packages', 'mcp', 'test', 'fixtures', 'server.mjs')
    const p = suite.start([
      { toolCalls: [{ id: 'm1', name: 'mcp__fx__echo', arguments: { text: 'over mcp' } }], expect: { toolsInclude: ['mcp__fx__echo', 'mcp__fx__add'] } },
      { text: 'done', expect: { lastToolResultIncludes: 'echo: over mcp' } },
    ])
    await p.initialize({ session: { notices: {} } })
    const { sessionId } = await p.agent.request('session/new', {
      cwd: suite.setup.cwd,
      mcpServers: [
        { name: 'fx', command: process.execPath, args: [fixture], env: [] },
        { name: 'broken', command: join(suite.setup.cwd, 'no-such-server'), args: [], env: [] },
      ],
    })
    await until(() => sessionUpdates(p, sessionId).some((u) => u.sessionUpdate === 'notice'), 10_000, 'the notice')
    expect(sessionUpdates(p, sessionId).find((u) => u.sessionUpdate === 'notice')).toMatchObject({ severity: expect.stringMatching(/warning|error/), title: expect.stringContaining('broken') })
    expect(await ask(p, sessionId, 'use mcp')).toMatchObject({ stopReason: 'end_turn' })
    expect(suite.model.failures).toEqual([])
  })

  it('mounts http servers too, for that session only', async () => {
    const fixture = join(ROOT, 'packages', 'mcp', 'test', 'fixtures', 'server.mjs')
    const server = spawn(process.execPath, [fixture, 'http'], { stdio: ['ignore', 'pipe', 'inherit'] })
    try {
      const port = await new Promise<number>((resolve) => server.stdout!.on('data', (d: Buffer) => { const m = /listening (\d+)/.exec(d.toString()); if (m) resolve(Number(m[1])) }))
      const p = suite.start([
        { toolCalls: [{ id: 'h1', name: 'mcp__web__add', arguments: { a: 2, b: 3 } }], expect: { toolsInclude: ['mcp__web__add'] } },
        { text: 'five', expect: { lastToolResultIncludes: '5' } },
        { text: 'no mcp here' },
      ])
      await p.initialize()
      const { sessionId } = await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [{ type: 'http', name: 'web', url: `http://127.0.0.1:${port}/`, headers: [] }] })
      expect(await ask(p, sessionId, 'add')).toMatchObject({ stopReason: 'end_turn' })
      const other = await newSession(p)
      await ask(p, other, 'tools?')
      const names = (suite.model.requests[2]!.body as { tools?: { function: { name: string } }[] }).tools?.map((t) => t.function.name) ?? []
      expect(names.some((n) => n.startsWith('mcp__web__'))).toBe(false)
      expect(suite.model.failures).toEqual([])
    } finally {
      server.kill()
    }
  })
})

describe('dsh --profile acp: authentication', () => {
  it('browser: the key is posted to a one-time page on 127.0.0.1, never across ACP', async () => {
    suite.setup.env.DEEPSEEK_API_KEY = ''
    const p = suite.start([{ text: 'logged in' }])
    let pageStatus = 0
    let url = ''
    p.elicit = async (request) => {
      url = (request as { url: string }).url
      pageStatus = (await fetch(url)).status
      const posted = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'apiKey=sk-from-browser' })
      expect(posted.status).toBe(200)
      return { action: 'accept' }
    }
    const init = await p.initialize({ elicitation: { url: {} } })
    expect(init.authMethods?.map((m) => m.id)).toEqual(['api-key', 'browser'])
    await p.agent.request('authenticate', { methodId: 'browser' })
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login\/[A-Za-z0-9_-]{43}$/)
    expect(pageStatus).toBe(200)
    await until(() => p.completedElicitations.length === 1, 5000, 'elicitation/complete')
    expect(readFileSync(join(suite.setup.home, '.credentials.yaml'), 'utf8')).toContain('sk-from-browser')
    expect(JSON.stringify(p.frames)).not.toContain('sk-from-browser')
    await expect(fetch(url)).rejects.toThrow()
    expect(await ask(p, await newSession(p), 'hi')).toMatchObject({ stopReason: 'end_turn' })
  })

  it('browser: a declined page fails with auth_required', async () => {
    suite.setup.env.DEEPSEEK_API_KEY = ''
    const p = suite.start([])
    await p.initialize({ elicitation: { url: {} } })
    expect((await rpcError(p.agent.request('authenticate', { methodId: 'browser' }))).code).toBe(-32000)
    expect(existsSync(join(suite.setup.home, '.credentials.yaml'))).toBe(false)
  })

  it('gateway (opt-in): a custom OpenAI-compatible endpoint with its headers', async () => {
    suite.setup.env.DEEPSEEK_API_KEY = ''
    const p = suite.start([{ text: 'via gateway' }])
    const init = await p.initialize({ auth: { _meta: { gateway: true } } })
    expect(init.authMethods?.map((m) => m.id)).toEqual(['api-key', 'gateway'])
    await p.agent.request('authenticate', { methodId: 'gateway', _meta: { gateway: { baseUrl: suite.model.url, headers: { 'X-Tenant': 'acme', Authorization: 'Bearer gw-key' }, model: 'gw-model' } } })
    const sessionId = await newSession(p)
    expect(await ask(p, sessionId, 'hi')).toMatchObject({ stopReason: 'end_turn' })
    expect(suite.model.requests[0]).toMatchObject({ headers: { 'x-tenant': 'acme', authorization: '<redacted>' }, body: { model: 'gw-model' } })
  })
})

describe('dsh --profile acp: prompt features', () => {
  it('slash commands run without a model turn and are listed', async () => {
    const p = suite.start([])
    await p.initialize()
    const sessionId = await newSession(p)
    await until(() => sessionUpdates(p, sessionId).some((u) => u.sessionUpdate === 'available_commands_update'), 5000, 'the command list')
    const list = sessionUpdates(p, sessionId).find((u) => u.sessionUpdate === 'available_commands_update') as { availableCommands: { name: string }[] }
    expect(list.availableCommands.map((c) => c.name)).toEqual(expect.arrayContaining(['status', 'model', 'permission']))
    expect(await ask(p, sessionId, '/status')).toEqual({ stopReason: 'end_turn' })
    expect(texts(p, sessionId)).toContain(sessionId)
    expect(await ask(p, sessionId, '/no-such-command')).toEqual({ stopReason: 'end_turn' })
    expect(texts(p, sessionId)).toContain('Unknown command /no-such-command')
    expect(suite.model.requests).toEqual([])
  })

  it('a skill in a session\'s own workspace (not the process cwd) is a slash command at once, and runs', async () => {
    const ws = join(suite.setup.cwd, '..', 'other-project')
    mkdirSync(join(ws, '.dsh', 'skills', 'release'), { recursive: true })
    writeFileSync(join(ws, '.dsh', 'skills', 'release', 'SKILL.md'), '---\nname: release\ndescription: Cut a release\n---\nTag it and write the changelog.\n')
    const p = suite.start([{ text: 'releasing', expect: { lastUserTextIncludes: 'Tag it and write the changelog.' } }])
    await p.initialize()
    const sessionId = (await p.agent.request('session/new', { cwd: ws, mcpServers: [] })).sessionId
    const named = () => sessionUpdates(p, sessionId).filter((u) => u.sessionUpdate === 'available_commands_update')
      .some((u) => (u as { availableCommands: { name: string }[] }).availableCommands.some((c) => c.name === 'release'))
    await until(named, 5000, 'the release command')
    expect(await ask(p, sessionId, '/release v2')).toMatchObject({ stopReason: 'end_turn' })
    expect(texts(p, sessionId)).toContain('releasing')
    expect(suite.model.failures).toEqual([])
  })

  it('closing a session stops its background jobs', async () => {
    const marker = `sleep ${6000 + Math.floor(Math.random() * 999)}`
    const p = suite.start([{ toolCalls: [{ name: 'bash', arguments: { command: marker, run_in_background: true } }] }, { text: 'started' }])
    await p.initialize()
    const sessionId = await newSession(p)
    expect(await ask(p, sessionId, 'start a job')).toMatchObject({ stopReason: 'end_turn' })
    await until(() => processesMatching(marker).length > 0, 5000, 'the job')
    await p.agent.request('session/close', { sessionId })
    await until(() => processesMatching(marker).length === 0, 5000, 'the job to stop')
  })

  it('images are validated and reach a vision model; a text-only model or a wrong type is -32602 before any request', async () => {
    suite.setup = acpEnv(suite.model.url, { OPENAI_API_KEY: 'mock', OPENAI_BASE_URL: suite.model.url })
    const p = suite.start([{ text: 'a pixel' }])
    await p.initialize()
    const sessionId = await newSession(p)
    const textOnly = await rpcError(p.agent.request('session/prompt', { sessionId, prompt: [{ type: 'image', mimeType: 'image/png', data: PNG }] }))
    expect(textOnly).toEqual({ code: -32602, message: 'Invalid params: the model deepseek:deepseek-chat does not accept images; choose a model that does (config option "model") or send text' })
    expect(suite.model.requests).toHaveLength(0)
    await p.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'gpt-4.1' })
    const reply = await p.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'what is this?' }, { type: 'image', mimeType: 'image/png', data: PNG }] })
    expect(reply).toMatchObject({ stopReason: 'end_turn' })
    expect(JSON.stringify(suite.model.requests[0]!.body)).toContain(PNG)
    const wrong = await rpcError(p.agent.request('session/prompt', { sessionId, prompt: [{ type: 'image', mimeType: 'image/jpeg', data: PNG }] }))
    expect(wrong).toEqual({ code: -32602, message: 'Invalid params: prompt[0]: image bytes are not image/jpeg' })
    expect(suite.model.requests).toHaveLength(1)
  })

  it('steering injects into the running turn; when idle a prompt is required', async () => {
    const p = suite.start([
      { toolCalls: [{ id: 'st1', name: 'bash', arguments: { command: 'sleep 0.5' } }] },
      { text: 'took it into account', expect: { lastUserTextIncludes: 'also check the README' } },
    ])
    await p.initialize()
    const sessionId = await newSession(p)
    expect(await p.agent.request('_session/steering', { sessionId, prompt: [{ type: 'text', text: 'x' }] })).toEqual({ outcome: 'promptRequired', reason: 'noRunningTurn' })
    const turn = ask(p, sessionId, 'work')
    await until(() => sessionUpdates(p, sessionId).some((u) => u.sessionUpdate === 'tool_call'), 10_000, 'the tool call')
    expect(await p.agent.request('_session/steering', { sessionId, prompt: [{ type: 'text', text: 'also check the README' }] })).toEqual({ outcome: 'injected' })
    expect(await turn).toMatchObject({ stopReason: 'end_turn' })
    expect(suite.model.failures).toEqual([])
  })

  it('modes are the permission presets: read-only stops a workspace write; config options pick the model', async () => {
    const p = suite.start([
      { toolCalls: [{ id: 'ro1', name: 'bash', arguments: { command: 'echo x > written.txt' } }] },
      { text: 'could not', expect: { model: 'deepseek-reasoner' } },
    ])
    await p.initialize()
    const created = await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [] })
    const { sessionId } = created
    expect(created.modes).toMatchObject({ currentModeId: 'workspace-write', availableModes: [{ id: 'read-only' }, { id: 'workspace-write' }, { id: 'danger-full-access' }] })
    await p.agent.request('session/set_mode', { sessionId, modeId: 'read-only' })
    const set = await p.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'deepseek-reasoner' })
    expect(set.configOptions.find((o) => o.id === 'model')).toMatchObject({ currentValue: 'deepseek-reasoner' })
    expect(set.configOptions.find((o) => o.id === 'mode')).toMatchObject({ currentValue: 'read-only' })
    expect(await ask(p, sessionId, 'write')).toMatchObject({ stopReason: 'end_turn' })
    expect(existsSync(join(suite.setup.cwd, 'written.txt'))).toBe(false)
    expect(sessionUpdates(p, sessionId)).toContainEqual({ sessionUpdate: 'current_mode_update', currentModeId: 'read-only' })
    expect(suite.model.failures).toEqual([])
    expect((await rpcError(p.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'no-such-model' }))).code).toBe(-32602)
  })

  it('the agent preset option narrows the tool set before the first turn, and is locked after it', async () => {
    const p = suite.start([{ text: 'read only', expect: { toolsInclude: ['read', 'grep'] } }])
    await p.initialize()
    const created = await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [] })
    expect(created.configOptions?.map((o) => o.id)).toEqual(['mode', 'model', 'reasoning_effort', 'agent'])
    const { sessionId } = created
    await p.agent.request('session/set_config_option', { sessionId, configId: 'agent', value: 'minimal' })
    expect(await ask(p, sessionId, 'look')).toMatchObject({ stopReason: 'end_turn' })
    const tools = (suite.model.requests[0]!.body as { tools?: { function: { name: string } }[] }).tools?.map((t) => t.function.name) ?? []
    expect(tools.sort()).toEqual(['glob', 'grep', 'ls', 'read'])
    expect((await rpcError(p.agent.request('session/set_config_option', { sessionId, configId: 'agent', value: 'code' }))).code).toBe(-32602)
  })

  it('additional directories are writable under workspace-write', async () => {
    const extra = join(suite.setup.home, '..', 'extra')
    mkdirSync(extra)
    const p = suite.start([{ toolCalls: [{ id: 'ad1', name: 'bash', arguments: { command: `echo ok > ${extra}/from-acp.txt` } }] }, { text: 'written' }])
    await p.initialize()
    const { sessionId } = await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [], additionalDirectories: [extra] })
    expect(await ask(p, sessionId, 'write there')).toMatchObject({ stopReason: 'end_turn' })
    expect(readFileSync(join(extra, 'from-acp.txt'), 'utf8')).toBe('ok\n')
    expect((await rpcError(p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [], additionalDirectories: ['rel/dir'] }))).code).toBe(-32602)
  })

  it('DSH_ACP_DEBUG=1 logs frames on stderr; stdout stays frames only', async () => {
    suite.setup.env.DSH_ACP_DEBUG = '1'
    const p = suite.start([])
    await p.initialize()
    await newSession(p)
    await until(() => p.stderr().includes('[acp] <- session/new'), 5000, 'the frame log')
    expect(p.stderr()).toContain('[acp] <- initialize')
  })
})
