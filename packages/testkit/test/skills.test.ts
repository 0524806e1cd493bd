import * as commandsPlugin from '@dsh/core/commands'
import * as skillsPlugin from '@dsh/core/skills'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { type Script } from '../src/index.js'
import { buildTree, expectRequestsMatchLog, tempDir, useMockModel } from '../src/tree.js'

const model = useMockModel()
let workspace: string
let home: string

function write(path: string, text: string) {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
}

const skillFile = (name: string, description: string, body: string) => `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`

const tree = (script: Script) => buildTree(model(), {
  script, permission: { default: 'workspace-write' }, cwd: workspace, plugins: [[commandsPlugin], [skillsPlugin, { home }]],
})

const systemOf = (i: number) => (model().requests[i]!.body as { messages: { role: string; content: string }[] }).messages[0]!.content
const toolNames = (i: number) => ((model().requests[i]!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name)

beforeEach(() => {
  workspace = tempDir('dsh-ws-')
  home = tempDir('dsh-home-')
  write(join(workspace, '.dsh/skills/greet/SKILL.md'), skillFile('greet', 'Greet people politely', 'GREET BODY: say hello, then read ./phrases.txt.'))
  write(join(workspace, '.claude/skills/release/SKILL.md'), skillFile('release', 'Cut a release', 'RELEASE BODY: tag and push.'))
  write(join(workspace, '.agents/skills/broken/SKILL.md'), '---\nname: broken\n---\nno description\n')
  write(join(home, 'skills/greet/SKILL.md'), skillFile('greet', 'The home greeting (shadowed)', 'HOME GREET BODY'))
  write(join(home, 'skills/deploy/SKILL.md'), skillFile('deploy', 'Deploy the app', 'DEPLOY BODY'))
})

describe('skills', () => {
  it('lists workspace and home skills to the model, which loads one with the skill tool', async () => {
    const { session, agent } = await tree([
      { toolCalls: [{ name: 'skill', arguments: { name: 'greet' } }], expect: { systemIncludes: '- greet: Greet people politely', toolsInclude: ['skill'] } },
      { text: 'Hello!', expect: { lastToolResultIncludes: 'GREET BODY' } },
    ])
    expect(await agent.followup('please greet me')).toEqual({ turn: 1, reason: 'completed', text: 'Hello!' })
    expect(model().failures).toEqual([])
    expect(systemOf(0)).toContain('Skills (instructions for specific tasks): when a task matches one, load it with the skill tool first and follow it.\n' +
      '- deploy: Deploy the app\n- greet: Greet people politely\n- release: Cut a release')
    expect(systemOf(0)).not.toContain('GREET BODY')
    expect(toolNames(0)).toEqual(['skill'])
    const result = session.events.find((e) => e.type === 'tool/result')!.data
    expect(result).toEqual({
      callId: 'call_1', name: 'skill', isError: false,
      content: [{ type: 'text', text: `Skill "greet" (directory: ${join(workspace, '.dsh/skills/greet')}; paths in it are relative to that directory)\n\nGREET BODY: say hello, then read ./phrases.txt.` }],
    })
    expectRequestsMatchLog(model(), session)
  })

  it('reports a broken skill file in the session and skips it', async () => {
    const { root, session, agent } = await tree([{ text: 'ok' }])
    await agent.followup('hi')
    await agent.followup('again')
    const notices = session.events.filter((e) => e.type === 'notice').map((e) => e.data)
    expect(notices).toEqual([{
      level: 'warn', source: 'skills',
      message: `Skipped a broken skill ${join(workspace, '.agents/skills/broken/SKILL.md')}: the front matter has no \`description\``,
    }])
    expect(systemOf(0)).not.toContain('broken')
    expect(root.skills.list(workspace).map((s) => s.name)).toEqual(['deploy', 'greet', 'release'])
  })

  it('/name invokes a skill: its body and the arguments go to the model as the prompt', async () => {
    const { root, session, agent } = await tree([{ text: 'released', expect: { lastUserTextIncludes: 'Arguments: v1.2.3' } }])
    // what a surface does when it opens a session outside the launch directory
    root.skills.refresh(workspace)
    expect(root.commands.list().filter((c) => c.source === 'skill').map((c) => [c.name, c.description])).toEqual([
      ['deploy', 'Deploy the app'], ['greet', 'Greet people politely'], ['release', 'Cut a release'],
    ])
    const ran = await root.commands.execute(session, agent, '/release v1.2.3')
    expect(ran).toMatchObject({ name: 'release', known: true })
    expect(await ran.turn).toEqual({ turn: 1, reason: 'completed', text: 'released' })
    const text = `RELEASE BODY: tag and push.\n\n(Skill "release" from ${join(workspace, '.claude/skills/release')}; paths in it are relative to that directory.)\n\nArguments: v1.2.3`
    expect(session.deriveMessages()[0]).toEqual({ role: 'user', content: [{ type: 'text', text }] })
    expect(JSON.stringify(model().requests[0]!.body)).toContain(JSON.stringify(text))
    expect(model().failures).toEqual([])
    expectRequestsMatchLog(model(), session)
  })

  it('picks up a skill added while the session is open at the next turn', async () => {
    const { root, session, agent } = await tree([{ text: 'one' }, { text: 'two' }])
    await agent.followup('first')
    expect(root.commands.get('lint')).toBeUndefined()
    write(join(workspace, '.dsh/skills/lint/SKILL.md'), skillFile('lint', 'Run the linters', 'LINT BODY'))
    await agent.followup('second')
    expect(systemOf(0)).not.toContain('- lint:')
    expect(systemOf(1)).toContain('- lint: Run the linters')
    expect(root.commands.get('lint')).toMatchObject({ name: 'lint', source: 'skill', description: 'Run the linters' })
    expectRequestsMatchLog(model(), session)
  })
})
