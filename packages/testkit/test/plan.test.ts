import * as commandsPlugin from '@dsh/core/commands'
import * as planPlugin from '@dsh/core/plan'
import { defineTool, type Session } from '@dsh/core'
import type { ApprovalOutcome, ApprovalRequest } from '@dsh/protocol'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { type Script } from '../src/index.js'
import { buildTree, expectRequestsMatchLog, useMockModel } from '../src/tree.js'

const read = defineTool({
  name: 'read', description: 'Read a file.', parameters: z.object({ path: z.string() }),
  execute: async (args) => `contents of ${args.path}`, output: { render: (value: string) => value },
})

const model = useMockModel()

const tree = (script: Script) => buildTree(model(), { script, tools: [read], plugins: [[commandsPlugin], [planPlugin]] })

type Body = { messages: { role: string; content: string }[]; tools?: { function: { name: string } }[] }
const body = (i: number) => model().requests[i]!.body as Body
const toolNames = (i: number) => (body(i).tools ?? []).map((t) => t.function.name)
const system = (i: number) => body(i).messages[0]!.content
const results = (session: Session) => session.events.filter((e) => e.type === 'tool/result').map((e) => (e.data as { content: { text: string }[] }).content[0]!.text)

const PLAN = '1. Read parser.ts\n2. Fix the off-by-one\n3. Run the tests'
const planScript = (after: string): Script => [
  { toolCalls: [{ name: 'read', arguments: { path: 'parser.ts' } }] },
  { toolCalls: [{ name: 'exit_plan_mode', arguments: { plan: PLAN } }] },
  { text: after },
]

describe('plan mode', () => {
  it('adds the section and offers exit_plan_mode only while on; accepting the plan ends plan mode', async () => {
    const { root, session, agent } = await tree(planScript('Done: fixed and tested.'))
    const asked: (ApprovalRequest & { id: string })[] = []
    root.approval.setAnswerer(async (_s, request) => { asked.push(request); return 'allow-once' as ApprovalOutcome })
    const { turn } = await root.commands.execute(session, agent, '/plan fix the parser')
    expect(await turn).toEqual({ turn: 1, reason: 'completed', text: 'Done: fixed and tested.' })

    expect(asked).toEqual([{ id: expect.any(String), kind: 'plan', title: 'Accept this plan?', reason: PLAN, rawInput: { plan: PLAN }, callId: 'call_2', tool: 'exit_plan_mode' }])
    expect(results(session)).toEqual(['contents of parser.ts', 'plan accepted; proceed'])
    // on for the exploring steps, off once the plan was accepted (same turn)
    expect([0, 1, 2].map((i) => system(i).includes('Plan mode is on.'))).toEqual([true, true, false])
    expect(system(0)).toContain('call exit_plan_mode with it')
    expect([0, 1, 2].map(toolNames)).toEqual([['exit_plan_mode', 'read'], ['exit_plan_mode', 'read'], ['read']])
    expect(session.events.filter((e) => e.type === 'plan/mode').map((e) => e.data)).toEqual([{ on: true }, { on: false }])
    expect(root.plan.active(session)).toBe(false)
    expectRequestsMatchLog(model(), session)
  })

  it('a rejected plan keeps plan mode on', async () => {
    const { root, session, agent } = await tree(planScript('What should I change?'))
    root.approval.setAnswerer(async () => 'reject')
    root.plan.set(session, true)
    expect(await agent.followup('fix the parser')).toMatchObject({ reason: 'completed', text: 'What should I change?' })
    expect(results(session)).toEqual(['contents of parser.ts', 'plan not accepted; keep planning or ask'])
    expect(session.events.filter((e) => e.type === 'approval/decision').map((e) => (e.data as { outcome: string }).outcome)).toEqual(['reject'])
    expect(root.plan.active(session)).toBe(true)
    expect(system(2)).toContain('Plan mode is on.')
    expectRequestsMatchLog(model(), session)
  })

  it('without an answerer (headless) the plan is not accepted', async () => {
    const { root, session, agent } = await tree(planScript('Waiting for approval.'))
    root.plan.set(session, true)
    await agent.followup('fix the parser')
    expect(results(session)[1]).toBe('plan not accepted; keep planning or ask')
    expect(root.plan.active(session)).toBe(true)
  })

  it('/plan off removes the section; exit_plan_mode outside plan mode changes nothing', async () => {
    const { root, session, agent } = await tree([{ toolCalls: [{ name: 'exit_plan_mode', arguments: { plan: 'x' } }] }, { text: 'ok' }])
    await root.commands.execute(session, agent, '/plan')
    expect((await root.commands.execute(session, agent, '/plan')).reply).toBe('Plan mode is already on.')
    expect((await root.commands.execute(session, agent, '/plan off')).reply).toBe('Plan mode off.')
    expect((await root.commands.execute(session, agent, '/plan off')).reply).toBe('Plan mode was not on.')
    await agent.followup('go')
    expect(system(0)).not.toContain('Plan mode')
    expect(toolNames(0)).toEqual(['read'])
    expect(results(session)).toEqual(['plan mode is not on; proceed'])
    expect(session.events.filter((e) => e.type === 'approval/request')).toEqual([])
  })
})
