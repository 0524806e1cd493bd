import { Context, type Message } from '@deepseek-ai/cordis'
import * as commandsPlugin from '@dsh/core/commands'
import * as planPlugin from '@dsh/core/plan'
import * as presetsPlugin from '@dsh/core/presets'
import * as promptPlugin from '@dsh/core/prompt'
import { defineTool } from '@dsh/core'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { type Script } from '../src/index.js'
import { buildTree, expectRequestsMatchLog, tempDir, useMockModel } from '../src/tree.js'

/** Stand-ins for the built-in tools (only their names matter here). */
const stub = (name: string) => defineTool({
  name, description: `${name} stub`, parameters: z.object({}),
  execute: async () => `${name} ran`, output: { render: (value: string) => value },
})
const TOOLS = ['read', 'ls', 'glob', 'grep', 'write', 'edit', 'bash']

/** printf-style %s / %d, enough for these messages. */
const format = ([text, ...params]: unknown[]) => String(text).replace(/%[sd]/g, () => String(params.shift()))

const model = useMockModel()
let presetDir: string
let logged: string[]

/** A fresh context whose log lines (`warn [presets] …`) are collected in `lines`. */
function logging(lines: string[]): Context {
  const root = new Context()
  root.logger.exporter({ levels: { default: 3 }, export: (m: Message) => { lines.push(`${m.type} [${m.name}] ${format(m.args)}`) } })
  return root
}

/** The agent is created by each test, under the preset it chose. */
async function tree(script: Script = []) {
  logged = []
  return buildTree(model(), {
    script, root: logging(logged), agent: false, tools: TOOLS.map((name) => stub(name)),
    plugins: [[commandsPlugin], [planPlugin], [presetsPlugin, { dir: presetDir }]],
  })
}

const sentTools = () => model().requests.map((r) => ((r.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name))
const sentSystem = (i: number) => ((model().requests[i]!.body as { messages: { role: string; content: string }[] }).messages[0]!).content

beforeEach(() => {
  presetDir = tempDir('dsh-presets-')
})

describe('agent presets', () => {
  it('minimal narrows the tools sent and adds its persona; standard offers every tool', async () => {
    const { root, session } = await tree([{ text: 'read-only answer' }, { text: 'full answer' }])
    root.presets.set(session, 'minimal')
    const agent = root.agents.create(session, root.presets.agentOptions(root.presets.current(session)))
    expect(await agent.followup('look')).toMatchObject({ reason: 'completed', text: 'read-only answer' })
    const other = await root.sessions.create({ cwd: session.cwd })
    const full = root.agents.create(other, root.presets.agentOptions(root.presets.current(other)))
    await full.followup('look')
    expect(sentTools()).toEqual([['read', 'ls', 'glob', 'grep'], TOOLS])
    expect(sentSystem(0)).toMatch(/^You are dsh, .*\n\nIn this session you can only read and search files;/s)
    expect(sentSystem(1)).not.toContain('only read and search')
    expectRequestsMatchLog(model(), session, 0, 1)
    expectRequestsMatchLog(model(), other, 1)
  })

  it('a call to a tool outside the preset is an unknown tool for the model', async () => {
    const { root, session } = await tree([{ toolCalls: [{ name: 'bash', arguments: {} }] }, { text: 'ok' }])
    root.presets.set(session, 'minimal')
    const agent = root.agents.create(session, root.presets.agentOptions(root.presets.current(session)))
    await agent.followup('run it')
    const result = session.events.find((e) => e.type === 'tool/result')!.data as { isError: boolean; content: { text: string }[] }
    expect(result.isError).toBe(true)
    expect(result.content[0]!.text).toContain('Unknown tool "bash"')
  })

  it('records the default at the first turn and refuses a switch after it', async () => {
    const { root, session } = await tree([{ text: 'hi' }])
    expect(root.presets.current(session).id).toBe('standard')
    const agent = root.agents.create(session)
    await agent.followup('hello')
    expect(session.events.filter((e) => e.type !== 'assistant/chunk').slice(0, 3).map((e) => [e.type, e.data])).toEqual([
      ['turn/start', { turn: 1 }], ['agent/preset', { preset: 'standard' }], ['user/message', { id: 'u-2', content: [{ type: 'text', text: 'hello' }], via: 'prompt' }],
    ])
    expect(() => root.presets.set(session, 'code')).toThrow(expect.objectContaining({ code: 'PRESET_LOCKED' }))
    const reply = await root.commands.execute(session, agent, '/agent code')
    expect(reply.reply).toBe('PRESET_LOCKED: the agent preset can only be chosen before the first turn (this session is "standard")\n  hint: start a new session to use another preset')
    expect(() => root.presets.set(session, 'standard')).not.toThrow()
    expect(session.events.filter((e) => e.type === 'agent/preset')).toHaveLength(1)
    expect(() => root.presets.get('nope')).toThrow(expect.objectContaining({ code: 'UNKNOWN_AGENT_PRESET', hint: 'choose one of: standard, code, minimal' }))
  })

  it('/agent switches before the first turn and applies tools and persona to the agent', async () => {
    const { root, session } = await tree([{ text: 'ok', expect: { systemIncludes: 'careful software engineer' } }, { text: 'ok' }])
    const agent = root.agents.create(session)
    expect((await root.commands.execute(session, agent, '/agent')).reply).toBe([
      'Agent presets (* = current):',
      '  standard * — Every tool and the default persona.',
      '  code — Every tool, with a persona for careful software engineering.',
      '  minimal — Read and search only: nothing that writes files or runs commands.',
      'Choose with /agent <preset> (before the first turn).',
    ].join('\n'))
    await root.commands.execute(session, agent, '/agent minimal')
    await root.commands.execute(session, agent, '/agent code')
    await agent.followup('go')
    expect(model().failures).toEqual([])
    expect(sentTools()).toEqual([TOOLS])
    expect(session.events.filter((e) => e.type === 'agent/preset').map((e) => e.data)).toEqual([{ preset: 'minimal' }, { preset: 'code' }])
  })

  it('loads user presets from YAML and reports a broken one without failing', async () => {
    writeFileSync(join(presetDir, 'reviewer.yaml'), `version: 1
label: Reviewer
description: Reads diffs and comments.
persona: You review changes; you never edit.
tools: [read, grep]
model: deepseek-reasoner
reasoningEffort: high
`)
    writeFileSync(join(presetDir, 'broken.yaml'), 'version: 1\ntools: read, grep\n')
    const { root, session } = await tree([{ text: 'reviewed', expect: { model: 'deepseek-reasoner', systemIncludes: 'You review changes; you never edit.' } }])
    expect(root.presets.list().map((p) => p.id)).toEqual(['standard', 'code', 'minimal', 'reviewer'])
    expect(root.presets.get('reviewer')).toEqual({
      id: 'reviewer', label: 'Reviewer', description: 'Reads diffs and comments.', persona: 'You review changes; you never edit.',
      tools: ['read', 'grep'], model: 'deepseek-reasoner', reasoningEffort: 'high',
    })
    expect(root.presets.problems).toEqual([{ file: join(presetDir, 'broken.yaml'), message: `${join(presetDir, 'broken.yaml')}: tools: Invalid input: expected array, received string` }])
    expect(logged).toContainEqual(`warn [presets] skipped a broken agent preset: ${root.presets.problems[0]!.message}`)
    root.presets.set(session, 'reviewer')
    const agent = root.agents.create(session, root.presets.agentOptions(root.presets.current(session)))
    expect(await agent.followup('review')).toMatchObject({ reason: 'completed', text: 'reviewed' })
    expect(model().failures).toEqual([])
    expect(sentTools()).toEqual([['read', 'grep']])
    expect(session.last('request/header')?.data.config).toEqual({ provider: 'deepseek', model: 'deepseek-reasoner', reasoningEffort: 'high' })
  })

  it('falls back to standard for an unknown default or a deleted preset, reporting each once', async () => {
    const lines: string[] = []
    const { root, session } = await buildTree(model(), {
      root: logging(lines), bare: true, agent: false, cwd: presetDir,
      plugins: [[promptPlugin, { projectInstructions: false }], [presetsPlugin, { default: 'missing', dir: presetDir }]],
    })
    expect(root.presets.defaultId).toBe('standard')
    session.append('agent/preset', { preset: 'deleted' })
    expect([root.presets.current(session).id, root.presets.current(session).id]).toEqual(['standard', 'standard'])
    expect(lines).toEqual([
      'warn [presets] default agent preset "missing" is unknown; using "standard"',
      `warn [presets] session ${session.id} uses agent preset "deleted", which is no longer defined; using "standard"`,
    ])
  })
})
