import type { Context } from '@deepseek-ai/cordis'
import { Launcher } from '@dsh/boot'
import * as commandsPlugin from '@dsh/core/commands'
import * as planPlugin from '@dsh/core/plan'
import * as presetsPlugin from '@dsh/core/presets'
import * as settingsPlugin from '@dsh/core/settings'
import * as titlesPlugin from '@dsh/core/titles'
import { defineTool, type Session } from '@dsh/core'
import * as headlessPlugin from '@dsh/headless/runner'
import * as hostPlugin from '@dsh/host/host'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { type Script } from '../src/index.js'
import { buildTree, expectRequestsMatchLog, tempDir, useMockModel } from '../src/tree.js'

const echo = defineTool({
  name: 'echo', description: 'Echo text back.', parameters: z.object({ text: z.string() }),
  execute: async (args) => args.text,
  output: { render: (value: string) => `echo: ${value}` },
})

const model = useMockModel()

const tree = (script: Script = []) => buildTree(model(), {
  script, permission: { default: 'workspace-write' }, tools: [echo],
  plugins: [[commandsPlugin], [presetsPlugin, { dir: tempDir('dsh-presets-') }], [planPlugin], [titlesPlugin]],
})

const runs = (session: Session) => session.events.filter((e) => e.type === 'command/run').map((e) => ({ ...e.data as object, ignorable: e.ignorable }))
const types = (session: Session) => session.events.filter((e) => e.type !== 'assistant/chunk').map((e) => e.type)

describe('command registry', () => {
  it('lists the built-ins and the plugin commands, and notifies changes', async () => {
    const { root } = await tree()
    expect(root.commands.list().map((c) => [c.name, c.source, c.argumentHint ?? ''])).toEqual([
      ['agent', 'builtin', '[preset]'], ['clear', 'builtin', ''], ['model', 'builtin', '[id | provider:id]'],
      ['permission', 'builtin', '[preset]'], ['plan', 'builtin', '[message | off]'], ['status', 'builtin', ''],
    ])
    let changes = 0
    root.on('commands/changed', () => { changes++ })
    const dispose = root.commands.register({ name: 'hello', description: 'Say hello', source: 'plugin', run: async ({ args }) => ({ reply: `hello ${args}` }) })
    expect(changes).toBe(1)
    expect(() => root.commands.register({ name: 'hello', description: '', source: 'plugin', run: async () => ({}) })).toThrow('a command named /hello is already registered')
    expect(() => root.commands.register({ name: 'Hello', description: '', source: 'plugin', run: async () => ({}) })).toThrow('must be lower-case')
    dispose()
    expect(changes).toBe(2)
    expect(root.commands.get('hello')).toBeUndefined()
  })

  it('unregisters a plugin\'s commands when the plugin unloads', async () => {
    const { root } = await tree()
    const fiber = await root.plugin({
      name: 'greeter', inject: ['commands'],
      apply: (ctx: Context) => { ctx.commands.register({ name: 'greet', description: 'Greet', source: 'plugin', run: async () => ({ reply: 'hi' }) }) },
    })
    expect(root.commands.get('greet')?.description).toBe('Greet')
    await fiber.dispose()
    expect(root.commands.get('greet')).toBeUndefined()
  })

  it('runs every built-in without a model request, logging each run (log-only)', async () => {
    const { root, session, agent } = await tree()
    const reply = async (text: string) => (await root.commands.execute(session, agent, text)).reply
    expect(await reply('/status')).toBe([
      `session     ${session.id}`,
      `workspace   ${session.cwd}`,
      'model       deepseek:deepseek-chat',
      'agent       standard',
      'permission  workspace-write',
      'plan mode   off',
      'context     ~1 / 128k tokens (0%)',
    ].join('\n'))
    expect(await reply('/model')).toContain('deepseek (DeepSeek): deepseek-chat *, deepseek-reasoner')
    expect(await reply('/model deepseek-reasoner')).toBe('Model: deepseek:deepseek-reasoner.')
    expect(await reply('/model gpt-9')).toMatch(/^UNKNOWN_MODEL: unknown model "gpt-9"\n {2}hint: choose one of: deepseek:deepseek-chat, /)
    expect(await reply('/permission')).toBe([
      'Permission presets (* = current):',
      '  read-only — Read anything; write nothing (commands run in a read-only sandbox).',
      '  workspace-write * — Read anything; write in the workspace and the temp root; ask to go beyond.',
      '  danger-full-access — No sandbox and no prompts. Use only in a disposable checkout or container.',
      'Switch with /permission <preset>.',
    ].join('\n'))
    expect(await reply('/permission read-only')).toBe('Permission preset: read-only (sandbox read-only, approval ask).')
    expect(await reply('/permission root')).toBe('UNKNOWN_PRESET: unknown permission preset "root"\n  hint: choose one of: read-only, workspace-write, danger-full-access')
    expect(await reply('/plan')).toBe('Plan mode on: the agent will explore and propose a plan before changing anything.')
    expect(await reply('/plan off')).toBe('Plan mode off.')
    expect(await reply('/agent minimal')).toBe('Agent preset: minimal — Read and search only: nothing that writes files or runs commands.')
    const clear = await root.commands.execute(session, agent, '/clear')
    expect(clear).toEqual({ name: 'clear', known: true, newSession: true, reply: `Starting a new session in ${session.cwd} (session ${session.id} stays saved).` })
    const unknown = await root.commands.execute(session, agent, '/nope please')
    expect(unknown).toEqual({ name: 'nope', known: false, reply: 'Unknown command /nope. Available: /agent, /clear, /model, /permission, /plan, /status.' })
    await expect(root.commands.execute(session, agent, 'hello')).rejects.toThrow('not a slash command')

    expect(model().requests).toEqual([])
    expect(session.deriveMessages()).toEqual([])
    expect(types(session)).toEqual([
      'command/run', 'command/run', 'model/select', 'command/run', 'command/run', 'command/run',
      'permission/preset', 'command/run', 'command/run', 'plan/mode', 'command/run', 'plan/mode', 'command/run',
      'agent/preset', 'command/run', 'command/run', 'command/run',
    ])
    const logged = runs(session)
    expect(logged.map((r) => 'name' in r && r.name)).toEqual(['status', 'model', 'model', 'model', 'permission', 'permission', 'permission', 'plan', 'plan', 'agent', 'clear', 'nope'])
    expect(logged[2]).toEqual({ name: 'model', args: 'deepseek-reasoner', reply: 'Model: deepseek:deepseek-reasoner.', ignorable: true })
    expect(logged[3]).toMatchObject({ name: 'model', args: 'gpt-9', error: { code: 'UNKNOWN_MODEL', message: 'unknown model "gpt-9"' }, ignorable: true })
    expect(logged[11]).toEqual({ name: 'nope', args: 'please', reply: unknown.reply, unknown: true, ignorable: true })
    expect(session.last('model/select')?.data).toEqual({ provider: 'deepseek', model: 'deepseek-reasoner' })
    expect(session.last('permission/preset')?.data).toEqual({ preset: 'read-only' })
  })

  it('/status reports the provider usage, the title and the switched presets', async () => {
    const { root, session, agent } = await tree([{ text: 'ok', usage: { input: 12_300, output: 5 } }])
    await root.commands.execute(session, agent, '/agent code')
    await agent.followup('Fix the flaky test')
    await root.commands.execute(session, agent, '/plan')
    const { reply } = await root.commands.execute(session, agent, '/status')
    expect(reply).toBe([
      `session     ${session.id} — Fix the flaky test`,
      `workspace   ${session.cwd}`,
      'model       deepseek:deepseek-chat',
      'agent       code',
      'permission  workspace-write',
      'plan mode   on',
      'context     12.3k / 128k tokens (10%)',
    ].join('\n'))
    expect(model().requests).toHaveLength(1)
  })

  it('/model switches the model of the next request (logged as model/select)', async () => {
    const { root, session, agent } = await tree([{ text: 'first' }, { text: 'second', expect: { model: 'deepseek-reasoner' } }])
    await agent.followup('one')
    const result = await root.commands.execute(session, agent, '/model deepseek-reasoner')
    expect(result).toEqual({ name: 'model', known: true, reply: 'Model: deepseek:deepseek-reasoner.' })
    expect(model().requests).toHaveLength(1)
    expect(await agent.followup('two')).toMatchObject({ reason: 'completed', text: 'second' })
    expect(model().requests.map((r) => (r.body as { model: string }).model)).toEqual(['deepseek-chat', 'deepseek-reasoner'])
    expect(session.last('request/header')?.data.config).toEqual({ provider: 'deepseek', model: 'deepseek-reasoner' })
    expect(model().failures).toEqual([])
    expectRequestsMatchLog(model(), session)
  })

  it('a command that sends work returns the turn; the log holds both', async () => {
    const { root, session, agent } = await tree([{ text: 'Here is my plan.', expect: { systemIncludes: 'Plan mode is on.', lastUserTextIncludes: 'refactor the parser' } }])
    const result = await root.commands.execute(session, agent, '/plan refactor the parser')
    expect(result.reply).toBe('Plan mode on.')
    expect(await result.turn).toEqual({ turn: 1, reason: 'completed', text: 'Here is my plan.' })
    expect(model().failures).toEqual([])
    expect(runs(session)).toEqual([{ name: 'plan', args: 'refactor the parser', reply: 'Plan mode on.', ignorable: true }])
    expectRequestsMatchLog(model(), session)
  })
})

describe('headless slash commands', () => {
  async function headless(argv: string[], script: Script = []) {
    const { root, mount } = await tree(script)
    await mount(settingsPlugin, { file: join(tempDir('dsh-home-'), 'settings.yaml') })
    await mount(hostPlugin)
    const out = new PassThrough()
    const err = new PassThrough()
    const collect = (s: PassThrough) => { let text = ''; s.on('data', (d: Buffer) => { text += d.toString() }); return () => text }
    const [stdout, stderr] = [collect(out), collect(err)]
    const cwd = tempDir('dsh-ws-')
    const launcher = new Launcher(root, { argv, home: cwd, profile: 'headless', cwd, env: {}, version: 'test', stdin: new PassThrough(), stdout: out, stderr: err })
    await mount(headlessPlugin)
    const code = await launcher.exited
    const [info] = await root.sessions.list({ cwd })
    const events = info ? (await root.sessions.read(info.id)).events : []
    return { code, stdout: stdout(), stderr: stderr(), events, root }
  }

  it('runs a command: reply on stdout, no model request, the run logged', async () => {
    const { code, stdout, stderr, events } = await headless(['/permission danger-full-access'])
    expect({ code, stdout }).toEqual({ code: 0, stdout: 'Permission preset: danger-full-access (sandbox danger-full-access, approval never).\n' })
    expect(stderr).toMatch(/^session: \S+\n$/)
    // the host records the session's presets at creation, then the command switches the permission preset
    expect(events.map((e) => e.type)).toEqual(['permission/preset', 'agent/preset', 'permission/preset', 'command/run'])
    expect(model().requests).toEqual([])
  })

  it('an unknown command goes to stderr with exit 2; a failed one exits 1', async () => {
    const unknown = await headless(['/bogus'])
    expect(unknown.code).toBe(2)
    expect(unknown.stdout).toBe('')
    expect(unknown.stderr).toContain('Unknown command /bogus. Available: /agent, /clear, /model, /permission, /plan, /status.')
    // an unknown command creates no session (issue 12)
    expect(unknown.stderr).toMatch(/^UNKNOWN_COMMAND: /)
    expect(unknown.events).toEqual([])
    await unknown.root.fiber.dispose()
    const failed = await headless(['/model nope'])
    expect(failed.code).toBe(1)
    expect(failed.stderr).toContain('UNKNOWN_MODEL: unknown model "nope"')
    expect(model().requests).toEqual([])
  })

  it('awaits a turn the command started and prints its answer; --agent chooses the preset', async () => {
    const { code, stdout, events } = await headless(['--agent', 'code', '/plan look around'], [{ text: 'The plan: …', expect: { systemIncludes: 'careful software engineer' } }])
    expect(model().failures).toEqual([])
    expect({ code, stdout }).toEqual({ code: 0, stdout: 'Plan mode on.\nThe plan: …\n' })
    expect(events.filter((e) => ['agent/preset', 'plan/mode', 'command/run', 'turn/end'].includes(e.type)).map((e) => [e.type, e.data])).toEqual([
      ['agent/preset', { preset: 'code' }],
      ['plan/mode', { on: true }],
      ['command/run', { name: 'plan', args: 'look around', reply: 'Plan mode on.' }],
      ['turn/end', { turn: 1, reason: 'completed' }],
    ])
  })

  it('a task that only looks like a path is a prompt', async () => {
    const { code, stdout } = await headless(['/usr/bin/env is missing, why?'], [{ text: 'answer', expect: { lastUserTextIncludes: '/usr/bin/env is missing' } }])
    expect({ code, stdout }).toEqual({ code: 0, stdout: 'answer\n' })
  })
})
