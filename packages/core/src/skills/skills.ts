import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { yaml } from '../home/files.js'

/** A skill: instructions the model loads on demand (`skill` tool) or the user invokes (`/name`). */
export interface Skill {
  name: string
  description: string
  /** The instructions (the file after its front matter). */
  body: string
  /** The skill's directory: relative paths in the body resolve against it. */
  dir: string
  file: string
  scope: 'workspace' | 'home'
}

/** A SKILL.md that was skipped, and why. */
export interface SkillProblem { file: string; message: string }

export interface SkillScan { skills: Skill[]; problems: SkillProblem[] }

/** Lower-case letters, digits, '-' and '_' (a skill name is also a slash command). */
export const SKILL_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/

/** Workspace skill directories, in precedence order (relative to the workspace). */
export const WORKSPACE_SKILL_DIRS = ['.dsh/skills', '.agents/skills', '.claude/skills'] as const

const FRONT_MATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/

/**
 * Parses a SKILL.md (pure): YAML front matter between `---` lines with a string `name`
 * (see SKILL_NAME) and a non-empty string `description`; the rest is the body, which must
 * not be empty. Other front-matter keys are ignored. Returns the problem otherwise.
 */
export function parseSkill(text: string): { name: string; description: string; body: string } | { problem: string } {
  const match = FRONT_MATTER.exec(text.replace(/^\uFEFF/, ''))
  if (!match) return { problem: 'no front matter: the file must start with a `---` block holding name and description' }
  let meta: unknown
  try {
    meta = yaml().parse(match[1]!)
  } catch (error) {
    return { problem: `the front matter is not valid YAML: ${(error as Error).message.split('\n')[0]}` }
  }
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return { problem: 'the front matter must be a mapping with name and description' }
  const { name, description } = meta as Record<string, unknown>
  if (typeof name !== 'string' || !name.trim()) return { problem: 'the front matter has no `name`' }
  if (!SKILL_NAME.test(name.trim())) return { problem: `name "${name}" must be lower-case letters, digits, '-' or '_' (at most 64)` }
  if (typeof description !== 'string' || !description.trim()) return { problem: 'the front matter has no `description`' }
  const body = text.replace(/^\uFEFF/, '').slice(match[0].length).trim()
  if (!body) return { problem: 'the skill has no instructions after its front matter' }
  return { name: name.trim(), description: description.trim().replace(/\s+/g, ' '), body }
}

/** The directories searched for `<dir>/SKILL.md`, highest precedence first. */
export function skillRoots(cwd: string, home: string): { root: string; scope: Skill['scope'] }[] {
  return [
    ...WORKSPACE_SKILL_DIRS.map((dir) => ({ root: join(cwd, dir), scope: 'workspace' as const })),
    { root: join(home, 'skills'), scope: 'home' },
  ]
}

/**
 * Reads every `<root>/<dir>/SKILL.md` (directories in name order; symlinks followed).
 * The first skill of a name wins (workspace over home, then the order of `roots`); broken
 * files are returned as problems, never thrown. A missing root is not a problem.
 */
export function scanSkills(roots: readonly { root: string; scope: Skill['scope'] }[]): SkillScan {
  const skills = new Map<string, Skill>()
  const problems: SkillProblem[] = []
  for (const { root, scope } of roots) {
    let entries: string[]
    try {
      entries = readdirSync(root).sort()
    } catch {
      continue
    }
    for (const entry of entries) {
      const dir = join(root, entry)
      const file = join(dir, 'SKILL.md')
      let text: string
      try {
        if (!statSync(dir).isDirectory()) continue
        text = readFileSync(file, 'utf8')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') problems.push({ file, message: `cannot read it: ${(error as Error).message}` })
        continue
      }
      const parsed = parseSkill(text)
      if ('problem' in parsed) {
        problems.push({ file, message: parsed.problem })
        continue
      }
      if (!skills.has(parsed.name)) skills.set(parsed.name, { ...parsed, dir, file, scope })
    }
  }
  return { skills: [...skills.values()].sort((a, b) => a.name.localeCompare(b.name)), problems }
}

/** Longest description shown in the prompt listing. */
export const LISTED_DESCRIPTION_CHARS = 300

/** The prompt section listing skills (pure); undefined when there are none. */
export function skillsSection(skills: readonly Skill[]): string | undefined {
  if (!skills.length) return undefined
  const lines = skills.map((s) => {
    const description = s.description.length > LISTED_DESCRIPTION_CHARS ? `${s.description.slice(0, LISTED_DESCRIPTION_CHARS - 1)}…` : s.description
    return `- ${s.name}: ${description}`
  })
  return `Skills (instructions for specific tasks): when a task matches one, load it with the skill tool first and follow it.\n${lines.join('\n')}`
}

/** What the `skill` tool returns to the model (pure). */
export function renderSkill(skill: Skill): string {
  return `Skill "${skill.name}" (directory: ${skill.dir}; paths in it are relative to that directory)\n\n${skill.body}`
}

/** The user message a `/name args` invocation sends (pure). */
export function invocationText(skill: Skill, args: string): string {
  const note = `(Skill "${skill.name}" from ${skill.dir}; paths in it are relative to that directory.)`
  return `${skill.body}\n\n${note}${args.trim() ? `\n\nArguments: ${args.trim()}` : ''}`
}
