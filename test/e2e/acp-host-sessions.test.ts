// Issue 9 item 7: ACP sessions are host sessions. The `question` tool (offered to ACP
// sessions, whose owner answers) reaches the editor as a permission request whose options
// are the answers, and the chosen one is the tool result in the log on disk; a session an
// editor created is a stored session like any other (`dsh sessions`), with the defaults a
// headless one gets.
import { describe, expect, it } from 'vitest'
import { runDsh } from './helpers/dsh.js'
import { useAcpSuite, type AcpProcess } from './helpers/acp.js'
import { readSessionFile, sessionIdOf } from './helpers/session-file.js'

const suite = useAcpSuite()

const ask = (p: AcpProcess, sessionId: string, text: string) => p.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })
const toolNames = (i: number) => ((suite.model.requests[i]!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name)

const question = {
  questions: [{
    question: 'Which database should the service use?',
    options: [{ label: 'Postgres', description: 'the team knows it' }, { label: 'SQLite' }],
  }],
}

describe('ACP sessions on the host', () => {
  it('a question-tool call is a permission request whose options are the answers; the chosen one is the tool result on disk', async () => {
    suite.model.setScript([
      { toolCalls: [{ id: 'q1', name: 'question', arguments: question }] },
      { text: 'Postgres it is', expect: { lastToolResultIncludes: 'Postgres' } },
    ])
    const p = suite.start()
    p.answer = (request) => {
      const chosen = request.options.find((o) => o.name === 'Postgres')
      return { outcome: { outcome: 'selected', optionId: chosen!.optionId } }
    }
    await p.initialize()
    const { sessionId } = await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [] })
    expect(await ask(p, sessionId, 'pick a database for me')).toMatchObject({ stopReason: 'end_turn' })
    expect(toolNames(0)).toContain('question')
    expect(p.permissions).toHaveLength(1)
    expect(p.permissions[0]).toMatchObject({
      sessionId,
      toolCall: { toolCallId: 'q1', title: 'Which database should the service use?', kind: 'other' },
      options: [{ name: 'Postgres', kind: 'allow_once' }, { name: 'SQLite', kind: 'allow_once' }],
    })
    expect(await p.end()).toEqual({ code: 0, signal: null })
    const events = readSessionFile(suite.setup.home, sessionId).events
    const result = events.find((e) => e.type === 'tool/result' && (e.data as { callId: string }).callId === 'q1')!
    expect(result.data).toMatchObject({
      name: 'question', isError: false,
      content: [{ type: 'text', text: 'Which database should the service use?\n→ Postgres' }],
    })
    expect(events.filter((e) => e.type === 'question/answer').map((e) => e.data)).toEqual([
      { id: expect.any(String), answers: [{ id: 'q1', selected: ['o1'] }] },
    ])
    expect(suite.model.failures).toEqual([])
  })

  it('a cancelled question dialog is no answer: the tool result says so and the session goes on', async () => {
    suite.model.setScript([
      { toolCalls: [{ id: 'q2', name: 'question', arguments: question }] },
      { text: 'I will decide myself', expect: { lastToolResultIncludes: 'did not answer' } },
    ])
    const p = suite.start()
    p.answer = () => ({ outcome: { outcome: 'cancelled' } })
    await p.initialize()
    const { sessionId } = await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [] })
    expect(await ask(p, sessionId, 'pick one')).toMatchObject({ stopReason: 'end_turn' })
    expect(await p.end()).toEqual({ code: 0, signal: null })
    const result = readSessionFile(suite.setup.home, sessionId).events.find((e) => e.type === 'tool/result')!
    expect(result.data).toMatchObject({ callId: 'q2', isError: true })
    expect(JSON.stringify(result.data)).toContain('The user did not answer')
  })

  it('a session an editor created is listed by `dsh sessions`, with the defaults a headless one gets', async () => {
    suite.model.setScript([{ text: 'from headless' }, { text: 'from the editor' }])
    const run = await runDsh(['--profile', 'headless', 'headless task'], { cwd: suite.setup.cwd, env: suite.setup.env })
    expect(run.code).toBe(0)
    const headlessId = sessionIdOf(run.stderr)

    const p = suite.start()
    await p.initialize()
    const { sessionId } = await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [] })
    expect(await ask(p, sessionId, 'editor task')).toMatchObject({ stopReason: 'end_turn' })
    expect(await p.end()).toEqual({ code: 0, signal: null })

    const listed = await runDsh(['sessions', '--json'], { cwd: suite.setup.cwd, env: suite.setup.env })
    expect(listed.code).toBe(0)
    const rows = JSON.parse(listed.stdout) as { id: string; workspace: string; title: string | null }[]
    expect(rows.map((r) => [r.id, r.workspace])).toEqual([[sessionId, suite.setup.cwd], [headlessId, suite.setup.cwd]])

    // the same defaults: what the model was sent, and the session's logged permission preset
    const sent = suite.model.requests.map((r) => (r.body as { model: string; max_tokens?: number }))
    expect(sent.map((b) => b.model)).toEqual([sent[0]!.model, sent[0]!.model])
    expect(sent[1]!.max_tokens).toBe(sent[0]!.max_tokens)
    const presets = (id: string) => readSessionFile(suite.setup.home, id).events.filter((e) => e.type === 'permission/preset').map((e) => e.data)
    expect(presets(sessionId)).toEqual(presets(headlessId))
    expect(presets(sessionId)).toHaveLength(1)
    // the tools differ only by the question tool, offered to the editor's session alone (its owner answers)
    expect(toolNames(1).sort()).toEqual([...toolNames(0), 'question'].sort())
  })
})
