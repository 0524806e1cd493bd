import type { Context } from '@deepseek-ai/cordis'
import type { SessionEvent } from '@dsh/protocol'
import { z } from 'zod'
import type { CommandSpec } from '../commands/registry.js'
import { resolveHome } from '../home/paths.js'
import type { Session } from '../session/session.js'
import { SkillService, skillTool } from '../skills/service.js'
import { invocationText, skillsSection, type SkillProblem } from '../skills/skills.js'

export const name = 'skills'
export const inject = ['sessions', 'prompt', 'tools']
export const Config = z.object({
  /** Where `skills/` is read besides the workspace; default `$DSH_HOME`. */
  home: z.string().min(1).optional(),
}).default({})

/**
 * `ctx.skills`, the `skill` tool, the `skills` prompt section (order 350) and one
 * `/<skill>` command per skill (when commands are mounted).
 * - The launch directory is scanned at start; a session's workspace is rescanned at every
 *   turn start: skills added or edited appear from the next turn, never within one.
 * - The `skill` tool is registered while any scanned workspace has skills; the prompt
 *   lists a workspace's skills (`name: description` only) when that tool is offered.
 * - Broken SKILL.md files are skipped: logged once, and a `notice` (source `skills`) is
 *   appended to a session that starts a turn in that workspace, once per file and reason.
 */
export function apply(ctx: Context, config: z.output<typeof Config>): void {
  const skills = new SkillService(ctx, config.home ?? resolveHome())

  let unregisterTool: (() => void) | undefined
  const syncTool = () => {
    const any = skills.names().length > 0
    if (any && !unregisterTool) unregisterTool = ctx.tools.register(skillTool(skills))
    else if (!any && unregisterTool) {
      unregisterTool()
      unregisterTool = undefined
    }
  }
  ctx.effect(() => () => {
    unregisterTool?.()
    unregisterTool = undefined
  }, 'skills.tool')
  ctx.on('skills/changed', syncTool)

  ctx.effect(() => ctx.prompt.section({
    id: 'skills', order: 350,
    render: (env) => (env.tools.includes('skill') ? skillsSection(skills.list(env.cwd)) : undefined),
  }), 'prompt.section(skills)')

  ctx.on('session/event', (session: Session, event: SessionEvent) => {
    if (event.type !== 'turn/start') return
    const { problems } = skills.refresh(session.cwd)
    // deferred: appending inside a session/event listener would reorder events for later listeners
    if (problems.length) queueMicrotask(() => reportProblems(session, problems))
  })

  // a session opened in another workspace (an editor's) gets its `/skill` commands at once
  ctx.on('session/opened', (session: Session) => { skills.refresh(session.cwd) })

  // the launch directory is scanned up front, so `/skill` commands exist before a first turn
  ctx.effect(() => {
    skills.refresh(process.cwd())
    return () => {}
  }, 'skills.scan(process.cwd)')

  ctx.inject(['commands'], (c) => {
    const registered = new Map<string, { description: string; dispose: () => void }>()
    const refused = new Set<string>()
    const sync = () => {
      const names = new Set(skills.names())
      for (const [name, entry] of registered) {
        if (names.has(name) && entry.description === describe(skills, name)) continue
        entry.dispose()
        registered.delete(name)
      }
      for (const name of names) {
        if (registered.has(name) || refused.has(name)) continue
        const spec = skillCommand(skills, name)
        try {
          registered.set(name, { description: spec.description, dispose: c.commands.register(spec) })
        } catch (error) {
          refused.add(name)
          c.logger('skills').warn('skill "%s" cannot be a command: %s', name, (error as Error).message)
        }
      }
    }
    sync()
    c.on('skills/changed', sync)
  })
}

/** `/<name> [args]`: sends the skill's instructions (and the arguments) to the agent as a prompt. */
export function skillCommand(skills: SkillService, name: string): CommandSpec {
  return {
    name, description: describe(skills, name), argumentHint: '[arguments]', source: 'skill',
    async run({ session, agent, args }) {
      const skill = skills.get(session.cwd, name)
      if (!skill) return { reply: `This workspace has no skill named "${name}".` }
      return { turn: agent.followup(invocationText(skill, args)) }
    },
  }
}

/** The description of the skill in the most recently scanned workspace that has it. */
function describe(skills: SkillService, name: string): string {
  for (const cwd of skills.workspaces().reverse()) {
    const skill = skills.get(cwd, name)
    if (skill) return skill.description
  }
  return `Run the ${name} skill`
}

function reportProblems(session: Session, problems: readonly SkillProblem[]): void {
  if (session.closed) return
  const noted = new Set<string>()
  for (const event of session.events) {
    if (event.type !== 'notice') continue
    const data = event.data as { message: string; source?: string }
    if (data.source === 'skills') noted.add(data.message)
  }
  for (const problem of problems) {
    const message = `Skipped a broken skill ${problem.file}: ${problem.message}`
    if (!noted.has(message)) session.append('notice', { level: 'warn', message, source: 'skills' })
  }
}
