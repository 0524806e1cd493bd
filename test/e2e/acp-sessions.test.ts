// `dsh --profile acp` sessions across processes (load after a restart, list, resume, fork,
// the cross-process lock), the standalone `dsh-acp` bin and its login, auth methods,
// slash commands, MCP servers per session, images and steering.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { cleanEnv, DSH_BIN } from './helpers/dsh.js'
import { readSessionFile } from './helpers/session-file.js'
import { type AcpProcess, DSH_ACP_BIN, rpcError, sessionUpdates, until, useAcpSuite } from './helpers/acp.js'

const suite = useAcpSuite()

const ask = (p: AcpProcess, sessionId: string, text: string) => p.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })
const newSession = async (p: AcpProcess) => (await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [] })).sessionId
const sha = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`

describe('dsh --profile acp: sessions across processes', () => {
  it('load after a process restart replays the whole history before the reply', async () => {
    const a = suite.start([
      { reasoning: 'I should look', toolCalls: [{ id: 'r1', name: 'bash', arguments: { command: "printf 'x\\ny\\n'", description: 'Show two lines' } }] },
      { toolCalls: [{ id: 'r2', name: 'todo_write', arguments: { todos: [{ content: 'Read the files', status: 'completed' }, { content: 'Report', status: 'in_progress' }] } }] },
      { text: 'Two lines: x and y.' },
    ])
    await a.initialize({ _meta: { terminal_output: true } })
    const sessionId = await newSession(a)
    await ask(a, sessionId, 'what is there?')
    expect(await a.end()).toEqual({ code: 0, signal: null })

    const b = suite.start()
    await b.initialize({ _meta: { terminal_output: true } })
    const loaded = b.agent.request('session/load', { sessionId, cwd: suite.setup.cwd, mcpServers: [] })
    let atReply = -1
    await loaded.then(() => { atReply = b.updates.length })
    const replay = sessionUpdates(b, sessionId).slice(0, atReply).filter((u) => u.sessionUpdate !== 'available_commands_update' && u.sessionUpdate !== 'session_info_update')
    const user = replay[0] as { messageId: string }
    expect(replay).toEqual([
      { sessionUpdate: 'user_message_chunk', messageId: user.messageId, content: { type: 'text', text: 'what is there?' } },
      { sessionUpdate: 'agent_thought_chunk', messageId: '1:1', content: { type: 'text', text: 'I should look' } },
      {
        sessionUpdate: 'tool_call', toolCallId: 'r1', status: 'pending', title: "printf 'x\\ny\\n'", kind: 'execute', locations: [],
        rawInput: { command: "printf 'x\\ny\\n'", description: 'Show two lines' },
        content: [{ type: 'content', content: { type: 'text', text: 'Show two lines' } }, { type: 'terminal', terminalId: 'dsh-term:r1' }],
        _meta: { terminal_info: { terminal_id: 'dsh-term:r1', cwd: suite.setup.cwd } },
      },
      { sessionUpdate: 'tool_call_update', toolCallId: 'r1', _meta: { terminal_output: { terminal_id: 'dsh-term:r1', data: 'x\ny' } } },
      {
        sessionUpdate: 'tool_call_update', toolCallId: 'r1', status: 'completed', rawOutput: { content: [{ type: 'text', text: 'x\ny' }], isError: false },
        _meta: { terminal_exit: { terminal_id: 'dsh-term:r1', exit_code: 0 } },
      },
      expect.objectContaining({ sessionUpdate: 'tool_call', toolCallId: 'r2', title: 'Update plan', kind: 'think' }),
      { sessionUpdate: 'plan', entries: [{ content: 'Read the files', priority: 'medium', status: 'completed' }, { content: 'Report', priority: 'medium', status: 'in_progress' }] },
      expect.objectContaining({ sessionUpdate: 'tool_call_update', toolCallId: 'r2', status: 'completed' }),
      { sessionUpdate: 'agent_message_chunk', messageId: '1:3', content: { type: 'text', text: 'Two lines: x and y.' } },
    ])
    // the logged id of the user message (the host's prompt id)
    const logged = readSessionFile(suite.setup.home, sessionId).events.find((e) => e.type === 'user/message')!
    expect(user.messageId).toBe((logged.data as { id: string }).id)
  })

  it('list (cwd filter, paging, titles, updatedAt), resume without replay, fork whole and cut', async () => {
    const patch = join(suite.setup.home, 'page.yml')
    spawnSync('sh', ['-c', `printf '%s\\n' '- id: acp-server' '  config: {pageSize: 1}' > ${patch}`])
    const a = suite.start([{ text: 'answer one' }, { text: 'answer two' }, { text: 'answer three' }], ['--profile', 'acp', '--patch', patch])
    await a.initialize()
    const first = await newSession(a)
    await ask(a, first, 'first question')
    await ask(a, first, 'second question')
    const other = await newSession(a)
    await ask(a, other, 'other question')
    const page1 = await a.agent.request('session/list', { cwd: suite.setup.cwd })
    expect(page1.sessions).toHaveLength(1)
    expect(page1.nextCursor).toEqual(expect.any(String))
    const page2 = await a.agent.request('session/list', { cwd: suite.setup.cwd, cursor: page1.nextCursor! })
    const all = [...page1.sessions, ...page2.sessions]
    expect(all.map((s) => s.sessionId).sort()).toEqual([first, other].sort())
    expect(all.find((s) => s.sessionId === first)).toMatchObject({ cwd: suite.setup.cwd, title: 'first question', updatedAt: expect.stringMatching(/^\d{4}-/) })
    expect((await a.agent.request('session/list', { cwd: '/nowhere/else' })).sessions).toEqual([])

    const whole = await a.agent.request<{ sessionId: string }>('session/fork', { sessionId: first, cwd: suite.setup.cwd })
    const cut = await a.agent.request<{ sessionId: string }>('session/fork', {
      sessionId: first, cwd: suite.setup.cwd, _meta: { jetbrains: { air: { fork: { version: 1, messageId: '1:1', messageFingerprint: sha('answer one') } } } },
    })
    for (const bad of [{ version: 1, messageId: '7:7' }, { version: 1, messageId: '1:1', messageFingerprint: sha('nope') }, { version: 3, messageId: '1:1' }]) {
      expect((await rpcError(a.agent.request('session/fork', { sessionId: first, cwd: suite.setup.cwd, _meta: { jetbrains: { air: { fork: bad } } } }))).code).toBe(-32602)
    }
    await a.end()

    const b = suite.start()
    await b.initialize()
    const texts = async (id: string) => {
      const count = b.updates.length
      await b.agent.request('session/load', { sessionId: id, cwd: suite.setup.cwd, mcpServers: [] })
      return b.updates.slice(count).filter((u) => u.sessionId === id && u.update.sessionUpdate === 'agent_message_chunk').map((u) => (u.update as { content: { text: string } }).content.text)
    }
    expect(await texts(whole.sessionId)).toEqual(['answer one', 'answer two'])
    expect(await texts(cut.sessionId)).toEqual(['answer one'])
    const before = b.updates.length
    await b.agent.request('session/close', { sessionId: first }).catch(() => undefined)
    await b.agent.request('session/resume', { sessionId: first, cwd: suite.setup.cwd })
    await new Promise((r) => setTimeout(r, 200))
    expect(b.updates.slice(before).filter((u) => u.sessionId === first).map((u) => u.update.sessionUpdate).filter((k) => k !== 'available_commands_update' && k !== 'session_info_update')).toEqual([])
  })

  it('a session another process writes cannot be loaded; it can once that process closed it', async () => {
    const a = suite.start([{ text: 'hello' }, { text: 'from b' }])
    await a.initialize()
    const sessionId = await newSession(a)
    await ask(a, sessionId, 'hi')
    const b = suite.start()
    await b.initialize()
    const error = await rpcError(b.agent.request('session/load', { sessionId, cwd: suite.setup.cwd, mcpServers: [] }))
    expect(error).toMatchObject({ code: -32603, message: expect.stringContaining('SESSION_LOCKED'), data: { code: 'SESSION_LOCKED' } })
    expect((await rpcError(b.agent.request('session/resume', { sessionId, cwd: suite.setup.cwd }))).code).toBe(-32603)
    await a.agent.request('session/close', { sessionId })
    await b.agent.request('session/load', { sessionId, cwd: suite.setup.cwd, mcpServers: [] })
    expect(await ask(b, sessionId, 'now me')).toMatchObject({ stopReason: 'end_turn' })
  })
})

describe('dsh-acp and login', () => {
  it('an edit of the shared home patch does not cut off a connected editor: it is reported, not applied', async () => {
    const p = suite.start([{ text: 'before' }, { text: 'after the edit' }])
    await p.initialize()
    const sessionId = await newSession(p)
    expect(await ask(p, sessionId, 'one')).toMatchObject({ stopReason: 'end_turn' })
    writeFileSync(join(suite.setup.home, 'cordis.patch.yml'), '- id: llm\n  config: {idleTimeoutMs: 120000}\n')
    await until(() => p.stderr().includes('not applied'))
    expect(p.stderr()).toContain('reload of ' + join(suite.setup.home, 'cordis.patch.yml') + ' not applied: an ACP client is connected')
    expect(await ask(p, sessionId, 'two')).toMatchObject({ stopReason: 'end_turn' })
  })

  it('the standalone bin serves the same composition', async () => {
    const p = suite.start([{ text: 'standalone' }], [], [process.execPath, DSH_ACP_BIN])
    const init = await p.initialize()
    expect(init.agentInfo).toMatchObject({ name: 'dsh' })
    const sessionId = await newSession(p)
    expect(await ask(p, sessionId, 'hi')).toMatchObject({ stopReason: 'end_turn' })
  })

  it('dsh-acp login and dsh --profile acp login store the key in $DSH_HOME', () => {
    const env = cleanEnv({ DSH_HOME: suite.setup.home, HOME: suite.setup.home })
    const viaBin = spawnSync(process.execPath, [DSH_ACP_BIN, 'login', '--provider', 'openai'], { input: 'sk-openai-key\n', env, encoding: 'utf8' })
    expect(viaBin.status).toBe(0)
    const viaProfile = spawnSync(DSH_BIN, ['--profile', 'acp', 'login'], { input: 'sk-deepseek-key\n', env, encoding: 'utf8' })
    expect(viaProfile.stderr).toContain('stored the deepseek key')
    expect(viaProfile.status).toBe(0)
    const file = readFileSync(join(suite.setup.home, '.credentials.yaml'), 'utf8')
    expect(file).toContain('sk-openai-key')
    expect(file).toContain('sk-deepseek-key')
    expect(viaBin.stdout + viaBin.stderr + viaProfile.stdout + viaProfile.stderr).not.toContain('sk-')
  })
})
