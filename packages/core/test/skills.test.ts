import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { invocationText, parseSkill, scanSkills, skillRoots, skillsSection, type Skill } from '../src/skills/skills.js'

function write(path: string, text: string) {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
}

describe('parseSkill', () => {
  it('reads name and description from the front matter and the rest as the body', () => {
    const text = '\uFEFF---\nname: review\ndescription: >\n  Review a change\n  carefully\nallowed-tools: [read]\n---\n\n# Review\nSteps.\n'
    expect(parseSkill(text)).toEqual({ name: 'review', description: 'Review a change carefully', body: '# Review\nSteps.' })
    expect(parseSkill('---\r\nname: x\r\ndescription: d\r\n---\r\nbody')).toEqual({ name: 'x', description: 'd', body: 'body' })
  })

  it('names what is wrong with a broken file', () => {
    expect(parseSkill('# no front matter')).toEqual({ problem: 'no front matter: the file must start with a `---` block holding name and description' })
    expect(parseSkill('---\nname: [x\n---\nbody')).toMatchObject({ problem: expect.stringMatching(/^the front matter is not valid YAML: /) })
    expect(parseSkill('---\n- a\n---\nbody')).toEqual({ problem: 'the front matter must be a mapping with name and description' })
    expect(parseSkill('---\ndescription: d\n---\nbody')).toEqual({ problem: 'the front matter has no `name`' })
    expect(parseSkill('---\nname: Bad Name\ndescription: d\n---\nbody')).toEqual({ problem: 'name "Bad Name" must be lower-case letters, digits, \'-\' or \'_\' (at most 64)' })
    expect(parseSkill('---\nname: x\ndescription: 5\n---\nbody')).toEqual({ problem: 'the front matter has no `description`' })
    expect(parseSkill('---\nname: x\ndescription: d\n---\n  \n')).toEqual({ problem: 'the skill has no instructions after its front matter' })
  })
})

describe('scanSkills', () => {
  it('finds <root>/<dir>/SKILL.md with workspace over home and .dsh over .agents over .claude', () => {
    const ws = mkdtempSync(join(tmpdir(), 'dsh-skills-ws-'))
    const home = mkdtempSync(join(tmpdir(), 'dsh-skills-home-'))
    const skill = (name: string, body: string) => `---\nname: ${name}\ndescription: about ${name}\n---\n${body}`
    write(join(ws, '.dsh/skills/a/SKILL.md'), skill('alpha', 'dsh alpha'))
    write(join(ws, '.agents/skills/a/SKILL.md'), skill('alpha', 'agents alpha'))
    write(join(ws, '.claude/skills/b/SKILL.md'), skill('beta', 'claude beta'))
    write(join(ws, '.claude/skills/c/SKILL.md'), '---\nname: gamma\n---\nx')
    write(join(ws, '.claude/skills/notes.txt'), 'not a skill dir')
    mkdirSync(join(ws, '.claude/skills/empty'))
    write(join(home, 'skills/b/SKILL.md'), skill('beta', 'home beta'))
    write(join(home, 'shared/d/SKILL.md'), skill('delta', 'home delta'))
    symlinkSync(join(home, 'shared/d'), join(home, 'skills/d'))
    const scan = scanSkills(skillRoots(ws, home))
    expect(scan.skills.map(({ name, body, dir, scope }) => ({ name, body, dir, scope }))).toEqual([
      { name: 'alpha', body: 'dsh alpha', dir: join(ws, '.dsh/skills/a'), scope: 'workspace' },
      { name: 'beta', body: 'claude beta', dir: join(ws, '.claude/skills/b'), scope: 'workspace' },
      { name: 'delta', body: 'home delta', dir: join(home, 'skills/d'), scope: 'home' },
    ])
    expect(scan.problems).toEqual([{ file: join(ws, '.claude/skills/c/SKILL.md'), message: 'the front matter has no `description`' }])
    expect(scanSkills(skillRoots(join(ws, 'missing'), join(home, 'missing')))).toEqual({ skills: [], problems: [] })
  })
})

describe('presentation', () => {
  const skill: Skill = { name: 'deploy', description: 'Deploy it', body: 'Run ./deploy.sh', dir: '/w/.dsh/skills/deploy', file: '/w/.dsh/skills/deploy/SKILL.md', scope: 'workspace' }

  it('lists skills as name: description lines only, and nothing without skills', () => {
    expect(skillsSection([])).toBeUndefined()
    const long = { ...skill, name: 'long', description: 'x'.repeat(400) }
    expect(skillsSection([skill, long])).toBe('Skills (instructions for specific tasks): when a task matches one, load it with the skill tool first and follow it.\n' +
      `- deploy: Deploy it\n- long: ${'x'.repeat(299)}…`)
  })

  it('invokes with the body, the directory and the arguments', () => {
    expect(invocationText(skill, ' prod ')).toBe('Run ./deploy.sh\n\n(Skill "deploy" from /w/.dsh/skills/deploy; paths in it are relative to that directory.)\n\nArguments: prod')
    expect(invocationText(skill, '')).toBe('Run ./deploy.sh\n\n(Skill "deploy" from /w/.dsh/skills/deploy; paths in it are relative to that directory.)')
  })
})
