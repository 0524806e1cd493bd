import { Service, type Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { defineTool, ToolError, type ToolDefinition } from '../tools/define.js'
import { renderSkill, scanSkills, skillRoots, type Skill, type SkillProblem, type SkillScan } from './skills.js'

declare module '@deepseek-ai/cordis' {
  interface Context { skills: SkillService }
  interface Events {
    /** The skills of a workspace changed after a rescan (commands and the tool refresh). */
    'skills/changed'(cwd: string): void
  }
}

/**
 * `ctx.skills`: the skills of each workspace (its `.dsh/skills`, `.agents/skills`,
 * `.claude/skills`, then `$DSH_HOME/skills`). A workspace is scanned on first use and
 * again on `refresh` (the plugin refreshes at every turn start), so the listing stays
 * the same within a turn. Broken files are kept as problems and logged once each.
 */
export class SkillService extends Service {
  private readonly scans = new Map<string, SkillScan>()
  private readonly reported = new Set<string>()

  constructor(ctx: Context, private readonly home: string) {
    super(ctx, 'skills')
  }

  /** The workspace's skills, by name (scanned on first use). */
  list(cwd: string): Skill[] {
    return (this.scans.get(cwd) ?? this.refresh(cwd)).skills
  }

  get(cwd: string, name: string): Skill | undefined {
    return this.list(cwd).find((s) => s.name === name)
  }

  /** Broken SKILL.md files of the last scan of `cwd`. */
  problems(cwd: string): SkillProblem[] {
    return (this.scans.get(cwd) ?? this.refresh(cwd)).problems
  }

  /** The workspaces scanned so far, least recently scanned first. */
  workspaces(): string[] {
    return [...this.scans.keys()]
  }

  /** Every skill name of every scanned workspace. */
  names(): string[] {
    const names = new Set<string>()
    for (const scan of this.scans.values()) for (const skill of scan.skills) names.add(skill.name)
    return [...names].sort()
  }

  /** Rescans `cwd`; emits `skills/changed` when its skills differ from the last scan. */
  refresh(cwd: string): SkillScan {
    const scan = scanSkills(skillRoots(cwd, this.home))
    const previous = this.scans.get(cwd)
    this.scans.delete(cwd)
    this.scans.set(cwd, scan)
    for (const problem of scan.problems) {
      const key = `${problem.file}\u0000${problem.message}`
      if (this.reported.has(key)) continue
      this.reported.add(key)
      this.ctx.logger('skills').warn('skipped a broken skill %s: %s', problem.file, problem.message)
    }
    if (!previous || JSON.stringify(previous.skills) !== JSON.stringify(scan.skills)) this.ctx.emit('skills/changed', cwd)
    return scan
  }
}

/** The `skill` tool: returns a skill's instructions (and its directory) to the model. */
export function skillTool(skills: SkillService): ToolDefinition {
  return defineTool({
    name: 'skill',
    description: 'Load a skill from the list in your instructions: returns its full instructions and its directory. ' +
      'Load the skill before doing a task it covers, then follow it.',
    parameters: z.object({ name: z.string().min(1).describe('The skill name, as listed') }),
    concurrencySafe: true,
    kind: 'read',
    async execute(args, call): Promise<Skill> {
      const skill = skills.get(call.cwd, args.name)
      if (!skill) {
        const names = skills.list(call.cwd).map((s) => s.name)
        throw new ToolError(`Unknown skill "${args.name}". ${names.length ? `Available: ${names.join(', ')}.` : 'This workspace has no skills.'}`)
      }
      return skill
    },
    output: { render: (skill: Skill) => renderSkill(skill) },
    presentCall: (args) => ({ card: 'generic', title: `Load skill ${args.name}`, kind: 'read' }),
  })
}
