import * as commandsPlugin from '@dsh/core/commands'
import * as compactionPlugin from '@dsh/core/compaction'
import { SUMMARY_PREFIX, defineTool, type Session } from '@dsh/core'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { type Script, type Step } from '../src/index.js'
import { buildTree, expectRequestsMatchLog, until, useMockModel } from '../src/tree.js'

const echo = defineTool({
  name: 'echo', description: 'Echo text back.', parameters: z.object({ text: z.string() }),
  execute: async (args) => args.text,
  output: { render: (value: string) => `echo: ${value}` },
})

const WINDOW = 2000
const model = useMockModel()

const tree = (script: Script, compaction: Record<string, unknown> = { contextWindow: WINDOW }) => buildTree(model(), {
  script, retry: { baseDelayMs: 5, maxDelayMs: 50 }, permission: { default: 'workspace-write' }, maxSteps: 40, tools: [echo],
  plugins: [[commandsPlugin], [compactionPlugin, compaction]],
})

const isSummaryRequest = (body: unknown) => JSON.stringify(body).includes('You condense an earlier part')
const summaryStep = (text: string): Step => ({ text, expect: { systemIncludes: 'You condense an earlier part' } })
const echoStep = (i: number): Step => ({ toolCalls: [{ name: 'echo', arguments: { text: `chunk ${i}: ${'lorem ipsum '.repeat(45)}` } }] })
const ofType = (session: Session, type: string) => session.events.filter((e) => e.type === type)

const summaries = (session: Session) => ofType(session, 'history/replace').map((e) => (e.data as { summary: string }).summary)

describe('compaction', () => {
  it('keeps a long scripted turn under a small window by summarising older history', async () => {
    const script: Script = []
    for (let i = 1; i <= 5; i++) script.push(echoStep(i))
    script.push(summaryStep('S1: the user asked to echo chunks; chunks 1-4 were echoed.'))
    for (let i = 6; i <= 8; i++) script.push(echoStep(i))
    script.push(summaryStep('S2: chunks 1-7 were echoed.'))
    for (let i = 9; i <= 11; i++) script.push(echoStep(i))
    script.push(summaryStep('S3: chunks 1-10 were echoed.'))
    script.push(echoStep(12), { text: 'all done' })
    const { session, agent } = await tree(script)

    expect(await agent.followup('start')).toEqual({ turn: 1, reason: 'completed', text: 'all done' })
    expect(model().failures).toEqual([])
    expect(model().requests).toHaveLength(script.length)
    // the estimate of every request the model received (without compaction the 7th is ~1900, the 16th ~4800)
    for (const request of model().requests) expect(Math.ceil(JSON.stringify(request.body).length / 4)).toBeLessThan(WINDOW * 0.8)
    expect(model().requests.map((r) => isSummaryRequest(r.body))).toEqual(script.map((step) => step === script[5] || step === script[9] || step === script[13]))
    expect(ofType(session, 'compaction/start').map((e) => (e.data as { reason: string }).reason)).toEqual(['threshold', 'threshold', 'threshold'])
    expect(summaries(session)).toEqual(['S1: the user asked to echo chunks; chunks 1-4 were echoed.', 'S2: chunks 1-7 were echoed.', 'S3: chunks 1-10 were echoed.'])
    // a later summary folds the earlier one in; the user's message is never summarised
    const second = ofType(session, 'compaction/start')[1]!.data as { request: { prompt: string } }
    expect(second.request.prompt).toContain('[summary of what came before]\nS1: the user asked')
    const history = session.deriveMessages()
    expect(history.slice(0, 2)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'start' }] },
      { role: 'user', content: [{ type: 'text', text: `${SUMMARY_PREFIX}S3: chunks 1-10 were echoed.` }] },
    ])
    expect(ofType(session, 'compaction/failed')).toEqual([])
    expectRequestsMatchLog(model(), session)
  })

  it('compacts and retries at once when the provider reports a context overflow', async () => {
    const { session, agent } = await tree([
      { text: 'hello' },
      { error: { status: 400, message: 'maximum context length exceeded' } },
      summaryStep('The user greeted; the agent said hello.'),
      { text: 'answer after compaction' },
    ], {})
    await agent.followup('hi')
    expect(await agent.followup('again')).toEqual({ turn: 2, reason: 'completed', text: 'answer after compaction' })
    const hi = session.events.find((e) => e.type === 'user/message')!
    const hello = session.events.find((e) => e.type === 'assistant/message')!
    expect(ofType(session, 'history/replace').map((e) => e.data)).toEqual([{ fromSeq: hi.seq, toSeq: hello.seq, summary: 'The user greeted; the agent said hello.' }])
    expect(ofType(session, 'llm/retry').map((e) => e.data)).toEqual([
      { attempt: 1, code: 'CONTEXT_WINDOW_EXCEEDED', message: expect.stringContaining('maximum context length exceeded'), delayMs: 0 },
    ])
    expect(ofType(session, 'compaction/start').map((e) => (e.data as { reason: string }).reason)).toEqual(['overflow'])
    expect(session.deriveMessages()).toEqual([
      { role: 'user', content: [{ type: 'text', text: `${SUMMARY_PREFIX}The user greeted; the agent said hello.` }] },
      { role: 'user', content: [{ type: 'text', text: 'again' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'answer after compaction' }] },
    ])
    expect(model().failures).toEqual([])
    expectRequestsMatchLog(model(), session)
  })

  it('leaves history untouched and ends the turn with the overflow when the summary fails', async () => {
    const { session, agent } = await tree([
      { text: 'hello' },
      { error: { status: 400, message: 'maximum context length exceeded' } },
      { error: { status: 503, message: 'overloaded' }, expect: { systemIncludes: 'You condense an earlier part' } },
    ], {})
    await agent.followup('hi')
    const before = session.deriveMessages()
    const outcome = await agent.followup('again')
    expect(outcome).toMatchObject({ reason: 'error', error: { code: 'CONTEXT_WINDOW_EXCEEDED' } })
    expect(ofType(session, 'history/replace')).toEqual([])
    expect(ofType(session, 'compaction/failed').map((e) => e.data)).toEqual([
      { reason: expect.stringMatching(/^the summary request failed: .*overloaded/), fromSeq: 1, toSeq: ofType(session, 'assistant/message')[0]!.seq },
    ])
    expect(session.deriveMessages()).toEqual([...before, { role: 'user', content: [{ type: 'text', text: 'again' }] }])
    expectRequestsMatchLog(model(), session)
  })

  it('/compact summarises on demand with the given focus, and says why when it cannot', async () => {
    const { root, session, agent } = await tree([
      { text: 'hello' },
      { text: 'the file is src/a.ts' },
      summaryStep('The user greeted; the agent said hello.'),
      { text: 'you are welcome' },
      { error: { status: 500, message: 'boom' }, expect: { systemIncludes: 'You condense an earlier part' } },
    ], {})
    const empty = await root.commands.execute(session, agent, '/compact')
    expect(empty).toMatchObject({ name: 'compact', known: true, reply: 'Nothing was compacted: nothing to compact: the history is already as short as it can get.' })
    await agent.followup('hi')
    await agent.followup('where is the file?')
    const requests = model().requests.length
    const done = await root.commands.execute(session, agent, '/compact file names')
    expect(done.reply).toMatch(/^Compacted 2 messages into a summary: the next request holds ~\d+ tokens \(was ~\d+\) of a 128k window\.$/)
    expect(done.turn).toBeUndefined()
    expect(model().requests).toHaveLength(requests + 1)
    expect((ofType(session, 'compaction/start')[0]!.data as { request: { prompt: string } }).request.prompt)
      .toMatch(/\[user\]\nhi\n\n\[assistant\]\nhello\n<\/conversation>\n\nWhen summarising, pay particular attention to: file names$/)
    expect(session.deriveMessages()).toEqual([
      { role: 'user', content: [{ type: 'text', text: `${SUMMARY_PREFIX}The user greeted; the agent said hello.` }] },
      { role: 'user', content: [{ type: 'text', text: 'where is the file?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'the file is src/a.ts' }] },
    ])
    await agent.followup('thanks')
    const failed = await root.commands.execute(session, agent, '/compact')
    expect(failed.reply).toMatch(/^Compaction failed: the summary request failed: .*boom.*\. History is unchanged\.$/)
    expect(ofType(session, 'history/replace')).toHaveLength(1)
    expect(ofType(session, 'compaction/failed')).toHaveLength(1)
    expectRequestsMatchLog(model(), session)
  })

  it('a cancel during an automatic summary stops it and ends the turn aborted', async () => {
    const script: Script = []
    for (let i = 1; i <= 5; i++) script.push(echoStep(i))
    script.push({ fault: 'stall', expect: { systemIncludes: 'You condense an earlier part' } })
    const { session, agent } = await tree(script)
    const turn = agent.followup('start')
    await until(() => ofType(session, 'compaction/start').length > 0)
    agent.cancel()
    expect((await turn).reason).toBe('aborted')
    expect(ofType(session, 'compaction/failed').map((e) => (e.data as { reason: string }).reason)).toEqual(['the summary request was cancelled'])
    expect(ofType(session, 'history/replace')).toEqual([])
  })
})

