import { type Script } from '@dsh/testkit'
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readSessionFile, sessionIdOf } from './helpers/session-file.js'
import { useDshWorld } from './helpers/world.js'

// Issue 5, as a new user would, through the built `dsh`: commands that never reach the
// model, a workspace skill listed, loaded and invoked, and a delegated task whose child
// session is on disk. Every request any dsh run of a test sent is what a stored session
// log derives (logsCheck).
const world = useDshWorld({ logsCheck: true })

const body = (i: number) => world.model.requests[i]!.body as { model: string; messages: { role: string; content: string }[] }

describe('commands, skills and subagents through headless', () => {
  it('/status, /model, /permission and /plan run without a model request', async () => {
    const status = await world.headless(['/status'])
    expect(status.code).toBe(0)
    const id = sessionIdOf(status.stderr)
    expect(status.stdout).toContain(id)
    expect(status.stdout).toMatch(/deepseek-chat/)
    expect(status.stdout).toMatch(/workspace-write/)
    for (const command of ['/model deepseek-reasoner', '/permission read-only', '/plan off']) {
      const result = await world.headless(['--resume', id, command])
      expect(result.code, `${command}: ${result.stderr}`).toBe(0)
    }
    const unknown = await world.headless(['/frobnicate'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('Unknown command /frobnicate')
    expect(world.model.requests).toHaveLength(0)
    const { events } = readSessionFile(world.home, id)
    expect(events.filter((e) => e.type === 'command/run').map((e) => (e.data as { name: string }).name)).toEqual(['status', 'model', 'permission', 'plan'])
    // the switches took effect: the next turn goes to the new model under the new preset
    world.model.setScript([{ text: 'ok' }])
    const turn = await world.headless(['--resume', id, 'hello'])
    expect(turn.code).toBe(0)
    expect(body(0).model).toBe('deepseek-reasoner')
    expect(events.find((e) => e.type === 'permission/preset' && (e.data as { preset: string }).preset === 'read-only')).toBeDefined()
  })

  it('/clear starts a new session in the same workspace and names it', async () => {
    const first = await world.headless(['/status'])
    const id = sessionIdOf(first.stderr)
    const cleared = await world.headless(['--resume', id, '/clear'])
    expect(cleared.code).toBe(0)
    const fresh = /^new session: (\S+)$/m.exec(cleared.stderr)?.[1]
    expect(fresh).toBeDefined()
    expect(fresh).not.toBe(id)
    expect(readSessionFile(world.home, fresh!).header).toMatchObject({ cwd: world.workspace })
    expect(world.model.requests).toHaveLength(0)
  })

  it('lists a workspace skill to the model, loads it with the skill tool, and /name invokes it', async () => {
    const dir = join(world.workspace, '.dsh', 'skills', 'release')
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'SKILL.md'), '---\nname: release\ndescription: Cut a release of this project\n---\nBump the version, tag it, and write the changelog entry.\n')
    world.model.setScript([{ toolCalls: [{ name: 'skill', arguments: { name: 'release' } }] }, { text: 'loaded' }])
    const listed = await world.headless(['what can you do?'])
    expect(listed.code).toBe(0)
    expect(JSON.stringify(body(0).messages[0])).toContain('release: Cut a release of this project')
    expect(body(1).messages.at(-1)!.content).toContain('Bump the version, tag it')
    world.model.setScript([{ text: 'releasing' }])
    const invoked = await world.headless(['/release v1.2.3'])
    expect(invoked.code).toBe(0)
    expect(invoked.stdout).toContain('releasing')
    const last = body(2).messages.at(-1)!.content
    expect(last).toContain('Bump the version, tag it')
    expect(last).toContain('v1.2.3')
  })

  it('keeps a long session under a small context window by compacting, and keeps working', async () => {
    writeFileSync(join(world.home, 'cordis.patch.yml'), '- id: compaction\n  config: {contextWindow: 6000}\n')
    const bash = { toolCalls: [{ name: 'bash', arguments: { command: 'seq 1000 1400' } }] }
    const summary = (n: number) => ({ text: `Summary ${n}: the numbers 1000-1400 were printed again.`, expect: { systemIncludes: 'You condense an earlier part' } })
    // the estimate crosses 80% of the window every third request once the history fills up
    const script: Script = [bash, bash, bash, bash]
    for (let n = 1; n <= 5; n++) script.push(summary(n), bash, bash)
    script.push(summary(6), { text: 'all done' })
    world.model.setScript(script)
    const result = await world.headless(['print the numbers many times'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe('all done\n')
    expect(world.model.failures).toEqual([])
    expect(world.model.requests).toHaveLength(script.length)
    for (const request of world.model.requests) expect(JSON.stringify(request.body).length / 4).toBeLessThan(6000)
    const { events } = readSessionFile(world.home, sessionIdOf(result.stderr))
    expect(events.filter((e) => e.type === 'compaction/start')).toHaveLength(6)
    expect(events.filter((e) => e.type === 'history/replace').map((e) => (e.data as { summary: string }).summary).at(-1))
      .toBe('Summary 6: the numbers 1000-1400 were printed again.')
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
  })

  it('delegates with the task tool: the child session is on disk and its answer reaches the parent', async () => {
    world.model.setScript([
      { toolCalls: [{ name: 'task', arguments: { description: 'count files', prompt: 'Count the files in the workspace.' } }] },
      { text: 'There are 0 files.', expect: { lastUserTextIncludes: 'Count the files' } },
      { text: 'The child says there are 0 files.' },
    ])
    const result = await world.headless(['delegate the counting'])
    expect(result.code).toBe(0)
    expect(result.stdout).toBe('The child says there are 0 files.\n')
    expect(world.model.failures).toEqual([])
    expect(body(2).messages.at(-1)).toMatchObject({ role: 'tool' })
    expect(body(2).messages.at(-1)!.content).toContain('There are 0 files.')
    const parentId = sessionIdOf(result.stderr)
    const files = readdirSync(join(world.home, 'sessions')).filter((f) => f.endsWith('.jsonl'))
    expect(files).toHaveLength(2)
    const childId = files.map((f) => f.slice(0, -'.jsonl'.length)).find((id) => id !== parentId)!
    const child = readSessionFile(world.home, childId)
    expect(child.header).toMatchObject({ parent: { id: parentId } })
    expect(child.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
  })
})
