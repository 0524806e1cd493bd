import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { EXIT_PLAN_TOOL, PlanMode, exitPlanTool, planCommand, planSection } from '../plan/service.js'

export const name = 'plan'
export const inject = ['sessions', 'prompt', 'tools', 'approval']
export const Config = z.object({}).default({})

/**
 * Plan mode: `ctx.plan`, its prompt section (order 150), the `exit_plan_mode` tool
 * (offered only while plan mode is on), and `/plan` when commands are mounted.
 * Guidance only: the sandbox and approval enforce what runs.
 */
export function apply(ctx: Context): void {
  ctx.sessions.defineEventType('plan/mode')
  const plan = new PlanMode(ctx)
  const sessionOf = (id: string) => ctx.sessions.get(id)
  ctx.effect(() => ctx.prompt.section({
    id: 'plan-mode', order: 150,
    render: (env) => {
      const session = sessionOf(env.sessionId)
      return session && plan.active(session) ? planSection(env) : undefined
    },
  }), 'prompt.section(plan-mode)')
  ctx.effect(() => ctx.tools.register(exitPlanTool(plan, sessionOf)), `tools.register(${EXIT_PLAN_TOOL})`)
  ctx.on('agent/request', async (agent, _request, next) => {
    const request = await next()
    if (plan.active(agent.session)) return request
    return { ...request, tools: request.tools.filter((t) => t.name !== EXIT_PLAN_TOOL) }
  })
  ctx.inject(['commands'], (c) => { c.commands.register(planCommand(plan)) })
}
