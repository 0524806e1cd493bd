import type { Context } from '@deepseek-ai/cordis'
import { formatError, type TurnEndReason } from '@dsh/protocol'
import { z } from 'zod'
import type { AgentOptions, TurnOutcome } from '../agent/types.js'
import type { PresetService } from '../presets/service.js'
import type { Session } from '../session/session.js'
import { defineTool, ToolError, type ToolCallContext, type ToolDefinition } from '../tools/define.js'
import type { Semaphore } from './semaphore.js'

declare module '@dsh/protocol' {
  interface SessionEventMap {
    /** A `task` call started a child agent in its own session (logged in the parent). */
    'subagent/start': { childSessionId: string; callId: string; description: string }
    /** The child's turn ended and its session was closed (logged in the parent). */
    'subagent/end': { childSessionId: string; callId: string; reason: TurnEndReason }
  }
}

export const TASK_TOOL = 'task'

export interface TaskEnv {
  ctx: Context
  /** Nesting bound: a session at this depth gets no `task` tool (top level is depth 0). */
  maxDepth: number
  slots: Semaphore
  /** Tools a child may have besides the parent's own filter (all when absent). */
  allow?: ((name: string) => boolean) | undefined
  maxSteps?: number | undefined
  /** Depth of the child sessions running now, by session id. */
  depths: Map<string, number>
}

export interface TaskValue { text: string; reason: TurnEndReason }

const Parameters = z.object({
  description: z.string().min(1).describe('A short (3-6 word) title for the task, shown to the user'),
  prompt: z.string().min(1).describe('Everything the subagent needs to do the task: it does not see this conversation'),
  preset: z.string().min(1).optional().describe('Agent preset of the subagent (default: this session\'s)'),
})

/**
 * The `task` tool: runs a child agent in a new session (header `parent: {id, callId}`,
 * same workspace and permission preset) with the prompt as its first message, and returns
 * the child's final answer. The child's tools are the parent's, narrowed by the allow-list
 * and the preset, without `task` at `maxDepth`. Cancelling the call cancels the child;
 * at most `slots.permits` children run at once. The child session is closed afterwards.
 */
export function taskTool(env: TaskEnv): ToolDefinition {
  return defineTool({
    name: TASK_TOOL,
    description: 'Delegate a self-contained task to a subagent. It works in its own session with its own tools, ' +
      'and its final answer comes back as this call\'s result. Use it for independent research or work that would ' +
      'otherwise fill your context. The subagent does not see this conversation: put everything it needs in `prompt`. ' +
      'Several task calls in one step run in parallel.',
    parameters: Parameters,
    concurrencySafe: true,
    kind: 'think',
    execute: (args, call) => runTask(env, args, call),
    output: {
      render: (value: TaskValue) => {
        const text = value.text.trim() || '(the subagent finished without a final answer)'
        return value.reason === 'completed' ? text : `${text}\n\n[the subagent stopped early: ${value.reason}]`
      },
    },
    presentCall: (args) => ({ card: 'generic', title: args.description, kind: 'think' }),
  })
}

async function runTask(env: TaskEnv, args: z.output<typeof Parameters>, call: ToolCallContext): Promise<TaskValue> {
  const { ctx } = env
  const parent = ctx.sessions.get(call.sessionId)
  if (!parent) throw new ToolError(`the session ${call.sessionId} is not open`)
  const depth = depthOf(env, parent) + 1
  if (depth > env.maxDepth) throw new ToolError(`subagents may nest at most ${env.maxDepth} level(s) deep; do this task yourself`)
  const presets = ctx.get('presets') as PresetService | undefined
  if (args.preset && !presets) throw new ToolError('agent presets are not available here; call task without `preset`')
  const preset = presets ? presetOrError(presets, args.preset ?? presets.current(parent).id) : undefined

  const release = await env.slots.acquire(call.signal)
  let child: Session | undefined
  let outcome: TurnOutcome | undefined
  try {
    child = await ctx.sessions.create({ cwd: call.cwd, parent: { id: parent.id, callId: call.callId } })
    call.log('subagent/start', { childSessionId: child.id, callId: call.callId, description: args.description })
    env.depths.set(child.id, depth)
    inheritSafety(ctx, parent, child)
    if (presets && preset) presets.set(child, preset.id)
    const options = childOptions(env, parent, depth, preset && presets ? presets.agentOptions(preset) : undefined)
    outcome = await runChild(ctx, child, options, args.prompt, call.signal)
  } finally {
    if (child) {
      env.depths.delete(child.id)
      await child.close()
      call.log('subagent/end', { childSessionId: child.id, callId: call.callId, reason: outcome?.reason ?? 'error' })
    }
    release()
  }
  if (outcome.reason === 'aborted' && call.signal.aborted) throw new ToolError('cancelled')
  if (outcome.reason === 'error' || outcome.reason === 'aborted') {
    const why = outcome.error ? `${outcome.error.code}: ${outcome.error.message}` : outcome.reason
    throw new ToolError(`the subagent failed (${why})${outcome.text ? `; its last answer: ${outcome.text}` : ''}`)
  }
  return { text: outcome.text, reason: outcome.reason }
}

async function runChild(ctx: Context, child: Session, options: AgentOptions, prompt: string, signal: AbortSignal): Promise<TurnOutcome> {
  const agent = ctx.agents.create(child, options)
  const cancel = () => agent.cancel()
  signal.addEventListener('abort', cancel, { once: true })
  try {
    const turn = agent.followup(prompt)
    // the turn's controller exists once followup returns: an abort that came first applies now
    if (signal.aborted) agent.cancel()
    return await turn
  } finally {
    signal.removeEventListener('abort', cancel)
    ctx.agents.remove(child.id)
  }
}

/** 0 for a top-level session; a running child's recorded depth; else one more than its live parent. */
function depthOf(env: TaskEnv, session: Session): number {
  const known = env.depths.get(session.id)
  if (known !== undefined) return known
  const parent = session.header.parent
  if (!parent || parent.fork || parent.callId === undefined) return 0
  const live = env.ctx.sessions.get(parent.id)
  return live ? depthOf(env, live) + 1 : 1
}

function presetOrError(presets: PresetService, id: string) {
  try {
    return presets.get(id)
  } catch (error) {
    throw new ToolError(formatError(error))
  }
}

/** The child runs under the parent's permission preset and extra workspace roots (logged in the child). */
function inheritSafety(ctx: Context, parent: Session, child: Session): void {
  ctx.permission.set(child, ctx.permission.current(parent).id)
  const roots = ctx.permission.roots(parent)
  if (roots.length) child.append('workspace/roots', { roots })
}

function childOptions(env: TaskEnv, parent: Session, depth: number, fromPreset: AgentOptions | undefined): AgentOptions {
  const parentAgent = env.ctx.agents.get(parent.id)
  const config = parentAgent?.modelConfig()
  const parentFilter = parentAgent?.options.toolFilter
  const presetFilter = fromPreset?.toolFilter
  const options: AgentOptions = {
    toolFilter: (name) => (name !== TASK_TOOL || depth < env.maxDepth)
      && (env.allow?.(name) ?? true) && (parentFilter?.(name) ?? true) && (presetFilter?.(name) ?? true),
    provider: config?.provider, model: config?.model, reasoningEffort: config?.reasoningEffort,
  }
  if (fromPreset?.provider || fromPreset?.model) {
    options.provider = fromPreset.provider ?? config?.provider
    options.model = fromPreset.model ?? (fromPreset.provider && fromPreset.provider !== config?.provider ? undefined : config?.model)
  }
  if (fromPreset?.reasoningEffort) options.reasoningEffort = fromPreset.reasoningEffort
  if (env.maxSteps) options.maxSteps = env.maxSteps
  return options
}
