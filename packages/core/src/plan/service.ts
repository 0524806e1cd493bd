import { Service, type Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import type { CommandSpec } from '../commands/registry.js'
import type { PromptEnv } from '../prompt/service.js'
import type { Session } from '../session/session.js'
import { defineTool } from '../tools/define.js'

declare module '@dsh/protocol' {
  interface SessionEventMap {
    /** Plan mode switched on or off for this session (it changes the system prompt). */
    'plan/mode': { on: boolean }
  }
}
declare module '@deepseek-ai/cordis' {
  interface Context { plan: PlanMode }
  interface Events { 'plan/changed'(session: Session, on: boolean): void }
}

export const EXIT_PLAN_TOOL = 'exit_plan_mode'
export const PLAN_ACCEPTED = 'plan accepted; proceed'
export const PLAN_NOT_ACCEPTED = 'plan not accepted; keep planning or ask'

/**
 * `ctx.plan`: plan mode per session, a logged state (`plan/mode {on}`). It is guidance
 * only — a prompt section and the `exit_plan_mode` tool; what the agent can actually do
 * is enforced by the sandbox, the permission preset and approval, not by plan mode.
 */
export class PlanMode extends Service {
  constructor(ctx: Context) {
    super(ctx, 'plan')
  }

  active(session: Session): boolean {
    return session.last('plan/mode')?.data.on ?? false
  }

  /** Logs `plan/mode` when the state changes; returns whether it changed. */
  set(session: Session, on: boolean): boolean {
    if (this.active(session) === on) return false
    session.append('plan/mode', { on })
    this.ctx.emit('plan/changed', session, on)
    return true
  }
}

/** The prompt section (order 150) while plan mode is on (pure). */
export function planSection(env: PromptEnv): string {
  const exit = env.tools.includes(EXIT_PLAN_TOOL)
    ? `When the plan is ready, call ${EXIT_PLAN_TOOL} with it; the user accepts or rejects it, and only after it is accepted do you change anything.`
    : 'When the plan is ready, present it and wait for the user to accept it before changing anything.'
  return `Plan mode is on. Explore read-only first: read, search and run only commands that change nothing. \
Do not edit files or run commands with side effects yet. Propose a concrete, step-by-step plan (files to change, how to verify). ${exit}`
}

/** `exit_plan_mode {plan}`: asks the user (approval kind `plan`) to accept the plan; acceptance ends plan mode. */
export function exitPlanTool(plan: PlanMode, sessionOf: (id: string) => Session | undefined) {
  return defineTool({
    name: EXIT_PLAN_TOOL, kind: 'other',
    description: 'Plan mode only: present your plan to the user for approval. On acceptance plan mode ends and you proceed.',
    parameters: z.object({ plan: z.string().min(1).describe('The plan, as concise markdown steps.') }),
    async execute(args, call): Promise<string> {
      const session = sessionOf(call.sessionId)
      if (!session || !plan.active(session)) return 'plan mode is not on; proceed'
      const outcome = await call.requestApproval({ kind: 'plan', title: 'Accept this plan?', reason: args.plan, rawInput: { plan: args.plan } })
      if (outcome !== 'allow-once' && outcome !== 'allow-always') return PLAN_NOT_ACCEPTED
      plan.set(session, false)
      return PLAN_ACCEPTED
    },
    output: { render: (value: string) => value },
    presentCall: (args) => ({ card: 'generic', title: 'Plan ready for review', kind: 'other', description: args.plan }),
  })
}

/** `/plan [message|off]`: on; off; or on and send the message as a prompt. */
export function planCommand(plan: PlanMode): CommandSpec {
  return {
    name: 'plan', description: 'Plan mode: explore and propose before changing anything', argumentHint: '[message | off]', source: 'builtin',
    async run({ session, agent, args }) {
      if (args === 'off') return { reply: plan.set(session, false) ? 'Plan mode off.' : 'Plan mode was not on.' }
      const changed = plan.set(session, true)
      if (!args) return { reply: changed ? 'Plan mode on: the agent will explore and propose a plan before changing anything.' : 'Plan mode is already on.' }
      return { reply: changed ? 'Plan mode on.' : 'Plan mode is on.', turn: agent.followup(args) }
    },
  }
}
