import * as presetsPlugin from '@dsh/core/presets'
import * as subagentsPlugin from '@dsh/core/subagents'
import { defineTool } from '@dsh/core'
import type { SessionEvent } from '@dsh/protocol'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { type Script } from '../src/index.js'
import { bodiesFromLog, buildTree, tempDir, until, useMockModel } from '../src/tree.js'

const echo = defineTool({
  name: 'echo', description: 'Echo text back.', parameters: z.object({ text: z.string() }),
  execute: async (args) => args.text,
  output: { render: (value: string) => `echo: ${value}` },
})

const model = useMockModel()

interface TreeOptions { subagents?: Record<string, unknown>; store?: string; presets?: boolean }

const tree = (script: Script, options: TreeOptions = {}) => buildTree(model(), {
  script, store: options.store ? { dir: options.store } : 'memory', permission: { default: 'workspace-write' }, tools: [echo],
  plugins: [...options.presets ? [[presetsPlugin, { dir: tempDir('dsh-presets-') }] as const] : [], [subagentsPlugin, options.subagents ?? {}]],
})

const toolNames = (i: number) => ((model().requests[i]!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name)
const dataOf = (events: readonly { type: string; data: unknown }[], type: string) => events.filter((e) => e.type === type).map((e) => e.data)
const task = (description: string, prompt: string, extra: object = {}) => ({ name: 'task', arguments: { description, prompt, ...extra } })

/** The bodies the model must have received, given the order in which the logs' requests interleaved. */
function bodies(logs: { events: readonly SessionEvent[] }[], order: [number, number][]) {
  const perLog = logs.map((l) => bodiesFromLog(l.events))
  return order.map(([log, i]) => perLog[log]![i]!)
}

describe('subagents', () => {
  it('delegates with task: the child runs in its own session and its answer is the tool result', async () => {
    const { root, session, agent } = await tree([
      { toolCalls: [task('Compute the product', 'What is 6*7? Answer with the number.')], expect: { toolsInclude: ['echo', 'task'] } },
      { text: '42', expect: { lastUserTextIncludes: 'What is 6*7?', toolsInclude: ['echo'] } },
      { text: 'The product is 42.', expect: { lastToolResultIncludes: '42' } },
    ])
    expect(await agent.followup('delegate it')).toEqual({ turn: 1, reason: 'completed', text: 'The product is 42.' })
    expect(model().failures).toEqual([])
    expect(toolNames(1)).toEqual(['echo'])

    const [start] = dataOf(session.events, 'subagent/start') as { childSessionId: string }[]
    const childId = start!.childSessionId
    expect(dataOf(session.events, 'subagent/start')).toEqual([{ childSessionId: childId, callId: 'call_1', description: 'Compute the product' }])
    expect(dataOf(session.events, 'subagent/end')).toEqual([{ childSessionId: childId, callId: 'call_1', reason: 'completed' }])
    expect(dataOf(session.events, 'tool/result')).toEqual([{ callId: 'call_1', name: 'task', content: [{ type: 'text', text: '42' }], isError: false }])

    const listed = await root.sessions.list()
    expect(listed.find((s) => s.id === childId)).toMatchObject({ id: childId, cwd: session.cwd, parent: { id: session.id, callId: 'call_1' } })
    expect(root.sessions.get(childId)).toBeUndefined()
    const child = await root.sessions.open(childId)
    expect(child.deriveMessages()).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is 6*7? Answer with the number.' }] },
      { role: 'assistant', content: [{ type: 'text', text: '42' }] },
    ])
    expect(dataOf(child.events, 'permission/preset')).toEqual([{ preset: 'workspace-write' }])
    expect(model().requests.map((r) => r.body)).toEqual(bodies([session, child], [[0, 0], [1, 0], [0, 1]]))
  })

  it('writes the child session to disk with its parent in the header (jsonl store)', async () => {
    const dir = tempDir('dsh-sessions-')
    const { root, session, agent } = await tree([
      { toolCalls: [task('Say hi', 'Say hi.')] }, { text: 'hi' }, { text: 'done' },
    ], { store: dir })
    await agent.followup('go')
    const childId = (dataOf(session.events, 'subagent/start')[0] as { childSessionId: string }).childSessionId
    const files = readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith('.jsonl'))
    const childFile = files.find((f) => f.includes(childId))
    expect(childFile).toBeDefined()
    const lines = readFileSync(join(dir, childFile!), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines[0]).toMatchObject({ format: 'dsh-session', id: childId, cwd: session.cwd, parent: { id: session.id, callId: 'call_1' } })
    expect(lines.slice(1).map((e) => e.type).filter((t) => t !== 'assistant/chunk')).toEqual([
      'permission/preset', 'turn/start', 'user/message', 'step/start', 'request/header', 'assistant/message', 'step/end', 'turn/end',
    ])
    expect((await root.sessions.list()).find((s) => s.id === childId)?.parent).toEqual({ id: session.id, callId: 'call_1' })
  })

  it('cancelling the parent cancels the child', async () => {
    const { root, session, agent } = await tree([{ toolCalls: [task('Wait', 'Take your time.')] }, { fault: 'stall', text: 'thinking…' }])
    const turn = agent.followup('go')
    await until(() => model().requests.length === 2)
    agent.cancel()
    expect((await turn).reason).toBe('aborted')
    const childId = (dataOf(session.events, 'subagent/start')[0] as { childSessionId: string }).childSessionId
    const child = await root.sessions.read(childId)
    expect(dataOf(child.events, 'turn/end')).toEqual([{ turn: 1, reason: 'aborted' }])
    expect(dataOf(session.events, 'subagent/end')).toEqual([{ childSessionId: childId, callId: 'call_1', reason: 'aborted' }])
    expect(dataOf(session.events, 'tool/result')).toEqual([
      { callId: 'call_1', name: 'task', content: [{ type: 'text', text: 'Cancelled: the user stopped this call.' }], isError: true },
    ])
  })

  it('bounds depth: at maxDepth a child is not offered task', async () => {
    const { root, session, agent } = await tree([
      { toolCalls: [task('Level one', 'Delegate further.')] },
      { toolCalls: [task('Level two', 'Answer deep.')], expect: { toolsInclude: ['task'] } },
      { text: 'deep', expect: { lastUserTextIncludes: 'Answer deep.' } },
      { text: 'mid', expect: { lastToolResultIncludes: 'deep' } },
      { text: 'top', expect: { lastToolResultIncludes: 'mid' } },
    ], { subagents: { maxDepth: 2 } })
    expect(await agent.followup('go')).toMatchObject({ reason: 'completed', text: 'top' })
    expect(model().failures).toEqual([])
    expect([0, 1, 2].map(toolNames)).toEqual([['task', 'echo'], ['task', 'echo'], ['echo']])
    const listed = await root.sessions.list()
    const mid = listed.find((s) => s.parent?.id === session.id)!
    expect(listed.find((s) => s.parent?.id === mid.id)).toMatchObject({ parent: { id: mid.id, callId: 'call_2' } })
  })

  it('runs at most maxParallel children at once', async () => {
    const { session, agent } = await tree([
      { toolCalls: [task('First', 'one'), task('Second', 'two')] },
      { text: 'answer one', expect: { lastUserTextIncludes: 'one' } },
      { text: 'answer two', expect: { lastUserTextIncludes: 'two' } },
      { text: 'both done' },
    ], { subagents: { maxParallel: 1 } })
    expect(await agent.followup('go')).toMatchObject({ reason: 'completed', text: 'both done' })
    expect(model().failures).toEqual([])
    const order = session.events.filter((e) => e.type.startsWith('subagent/')).map((e) => `${e.type}:${(e.data as { callId: string }).callId}`)
    expect(order).toEqual(['subagent/start:call_1', 'subagent/end:call_1', 'subagent/start:call_2', 'subagent/end:call_2'])
    expect(dataOf(session.events, 'tool/result').map((r) => (r as { content: { text: string }[] }).content[0]!.text)).toEqual(['answer one', 'answer two'])
  })

  it('runs the child under a chosen agent preset, and refuses an unknown one', async () => {
    const { root, session, agent } = await tree([
      { toolCalls: [task('Look around', 'List what you can.', { preset: 'minimal' }), task('Oops', 'x', { preset: 'nope' })] },
      { text: 'I can only read.' },
      { text: 'ok' },
    ], { presets: true })
    await agent.followup('go')
    expect(toolNames(1)).toEqual([])
    const childId = (dataOf(session.events, 'subagent/start')[0] as { childSessionId: string }).childSessionId
    expect(dataOf((await root.sessions.read(childId)).events, 'agent/preset')).toEqual([{ preset: 'minimal' }])
    const results = dataOf(session.events, 'tool/result') as { content: { text: string }[]; isError: boolean }[]
    expect(results.map((r) => [r.isError, r.content[0]!.text.split('\n')[0]])).toEqual([
      [false, 'I can only read.'], [true, 'Error: UNKNOWN_AGENT_PRESET: unknown agent preset "nope"'],
    ])
  })
})

