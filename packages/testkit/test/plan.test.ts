import { Context } from '@deepseek-ai/cordis'
import * as agentsPlugin from '@dsh/core/agents'
import * as approvalPlugin from '@dsh/core/approval'
import * as commandsPlugin from '@dsh/core/commands'
import * as credentialsPlugin from '@dsh/core/credentials'
import * as llmPlugin from '@dsh/core/llm'
import * as memoryStore from '@dsh/core/memory-store'
import * as permissionPlugin from '@dsh/core/permission'
import * as planPlugin from '@dsh/core/plan'
import * as promptPlugin from '@dsh/core/prompt'
import * as sessionsPlugin from '@dsh/core/sessions'
import * as toolsPlugin from '@dsh/core/tools'
import { defineTool, deriveMessages, type Session } from '@dsh/core'
import * as openaiPlugin from '@dsh/llm-openai/adapter'
import { buildChatRequest } from '@dsh/llm-openai'
import type { ApprovalOutcome, ApprovalRequest } from '@dsh/protocol'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { expectedBodies, requestsFromLog, startMockModel, type MockModel, type Script } from '../src/index.js'

const read = defineTool({
  name: 'read', description: 'Read a file.', parameters: z.object({ path: z.string() }),
  execute: async (args) => `contents of ${args.path}`, output: { render: (value: string) => value },
})

let model: MockModel
let root: Context
let previousEnv: Record<string, string | undefined>

async function tree(script: Script) {
  model.setScript(script)
  root = new Context()
  const mount = (plugin: object, config?: unknown) => root.plugin(plugin as never, config as never)
  await mount(memoryStore)
  await mount(sessionsPlugin)
  await mount(credentialsPlugin, { file: join(mkdtempSync(join(tmpdir(), 'dsh-cred-')), 'none.yaml') })
  await mount(llmPlugin, {})
  await mount(openaiPlugin)
  await mount(toolsPlugin)
  await mount(promptPlugin, { projectInstructions: false })
  await mount(permissionPlugin)
  await mount(approvalPlugin)
  await mount(agentsPlugin, { maxSteps: 20 })
  await mount(commandsPlugin)
  await mount(planPlugin)
  root.tools.register(read)
  const session = await root.sessions.create({ cwd: mkdtempSync(join(tmpdir(), 'dsh-ws-')) })
  return { session, agent: root.agents.create(session) }
}

type Body = { messages: { role: string; content: string }[]; tools?: { function: { name: string } }[] }
const body = (i: number) => model.requests[i]!.body as Body
const toolNames = (i: number) => (body(i).tools ?? []).map((t) => t.function.name)
const system = (i: number) => body(i).messages[0]!.content
const results = (session: Session) => session.events.filter((e) => e.type === 'tool/result').map((e) => (e.data as { content: { text: string }[] }).content[0]!.text)

function expectRequestsMatchLog(session: Session) {
  expect(model.requests.map((r) => r.body)).toEqual(expectedBodies(requestsFromLog(session.events, deriveMessages), buildChatRequest))
}

const PLAN = '1. Read parser.ts\n2. Fix the off-by-one\n3. Run the tests'
const planScript = (after: string): Script => [
  { toolCalls: [{ name: 'read', arguments: { path: 'parser.ts' } }] },
  { toolCalls: [{ name: 'exit_plan_mode', arguments: { plan: PLAN } }] },
  { text: after },
]

beforeEach(async () => {
  previousEnv = { key: process.env.DEEPSEEK_API_KEY, url: process.env.DEEPSEEK_BASE_URL }
  model = await startMockModel()
  process.env.DEEPSEEK_API_KEY = 'mock-key'
  process.env.DEEPSEEK_BASE_URL = model.url
})

afterEach(async () => {
  await root?.fiber.dispose()
  await model.close()
  for (const [k, v] of [['DEEPSEEK_API_KEY', previousEnv.key], ['DEEPSEEK_BASE_URL', previousEnv.url]] as const) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
})

describe('plan mode', () => {
  it('adds the section and offers exit_plan_mode only while on; accepting the plan ends plan mode', async () => {
    const { session, agent } = await tree(planScript('Done: fixed and tested.'))
    const asked: (ApprovalRequest & { id: string })[] = []
    root.approval.setAnswerer(async (_s, request) => { asked.push(request); return 'allow-once' as ApprovalOutcome })
    const { turn } = await root.commands.execute(session, agent, '/plan fix the parser')
    expect(await turn).toEqual({ turn: 1, reason: 'completed', text: 'Done: fixed and tested.' })

    expect(asked).toEqual([{ id: expect.any(String), kind: 'plan', title: 'Accept this plan?', reason: PLAN, callId: 'call_2', tool: 'exit_plan_mode' }])
    expect(results(session)).toEqual(['contents of parser.ts', 'plan accepted; proceed'])
    // on for the exploring steps, off once the plan was accepted (same turn)
    expect([0, 1, 2].map((i) => system(i).includes('Plan mode is on.'))).toEqual([true, true, false])
    expect(system(0)).toContain('call exit_plan_mode with it')
    expect([0, 1, 2].map(toolNames)).toEqual([['exit_plan_mode', 'read'], ['exit_plan_mode', 'read'], ['read']])
    expect(session.events.filter((e) => e.type === 'plan/mode').map((e) => e.data)).toEqual([{ on: true }, { on: false }])
    expect(root.plan.active(session)).toBe(false)
    expectRequestsMatchLog(session)
  })

  it('a rejected plan keeps plan mode on', async () => {
    const { session, agent } = await tree(planScript('What should I change?'))
    root.approval.setAnswerer(async () => 'reject')
    root.plan.set(session, true)
    expect(await agent.followup('fix the parser')).toMatchObject({ reason: 'completed', text: 'What should I change?' })
    expect(results(session)).toEqual(['contents of parser.ts', 'plan not accepted; keep planning or ask'])
    expect(session.events.filter((e) => e.type === 'approval/decision').map((e) => (e.data as { outcome: string }).outcome)).toEqual(['reject'])
    expect(root.plan.active(session)).toBe(true)
    expect(system(2)).toContain('Plan mode is on.')
    expectRequestsMatchLog(session)
  })

  it('without an answerer (headless) the plan is not accepted', async () => {
    const { session, agent } = await tree(planScript('Waiting for approval.'))
    root.plan.set(session, true)
    await agent.followup('fix the parser')
    expect(results(session)[1]).toBe('plan not accepted; keep planning or ask')
    expect(root.plan.active(session)).toBe(true)
  })

  it('/plan off removes the section; exit_plan_mode outside plan mode changes nothing', async () => {
    const { session, agent } = await tree([{ toolCalls: [{ name: 'exit_plan_mode', arguments: { plan: 'x' } }] }, { text: 'ok' }])
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
