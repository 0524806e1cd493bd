import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { toolMatcher } from '../presets/presets.js'
import { Semaphore } from '../subagents/semaphore.js'
import { taskTool } from '../subagents/task.js'

export const name = 'subagents'
export const inject = ['sessions', 'agents', 'tools', 'permission']
export const Config = z.object({
  /** How deep subagents nest: 1 lets the top-level agent delegate but not its children; 0 disables `task`. */
  maxDepth: z.number().int().min(0).default(1),
  /** Children running at once across this process; further `task` calls wait for a slot. */
  maxParallel: z.number().int().min(1).default(3),
  /** Tools a child may use (names, `*` matches any run of characters); default: the parent's. */
  tools: z.array(z.string().min(1)).optional(),
  /** Steps per child turn (default: the agents row's). */
  maxSteps: z.number().int().positive().optional(),
}).default({ maxDepth: 1, maxParallel: 3 })

/**
 * The `task` tool (see `taskTool`). Child sessions are ordinary sessions with
 * `header.parent = {id, callId}`: `ctx.sessions.list()` shows them with their parent, and
 * they can be opened like any other. The parent logs `subagent/start` and `subagent/end`.
 */
export function apply(ctx: Context, config: z.output<typeof Config>): void {
  ctx.sessions.defineEventType('subagent/start')
  ctx.sessions.defineEventType('subagent/end')
  if (config.maxDepth === 0) return
  const tool = taskTool({
    ctx, maxDepth: config.maxDepth, slots: new Semaphore(config.maxParallel), depths: new Map(),
    allow: config.tools ? toolMatcher(config.tools) : undefined, maxSteps: config.maxSteps,
  })
  ctx.effect(() => ctx.tools.register(tool), 'tools.register(task)')
}
