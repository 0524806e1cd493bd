import type { Context } from '@deepseek-ai/cordis'
import type {
  ApprovalOutcome, ApprovalPolicy, ApprovalRequest, ExecPolicy, Json, ToolCallBlock, ToolContent, ToolResult,
} from '@dsh/protocol'
import { failpoint, isDshError } from '@dsh/protocol'
import type { Session } from '../session/session.js'
import type { ToolDefinition, ToolProgress } from './define.js'
import { describeIssues } from './schema.js'

/** A call after lookup and validation, as pipeline listeners see it. */
export interface ToolInvocation {
  callId: string
  name: string
  /** Validated arguments. */
  args: any
  sessionId: string
  tool: ToolDefinition
}

export type PreDecision = { action: 'allow' } | { action: 'deny'; reason: string } | { action: 'ask'; reason: string }
/** A guard returns a denial reason, or nothing. Guards can only deny: nothing re-allows after them. */
export type ToolGuard = (call: ToolInvocation) => string | undefined | Promise<string | undefined>
export type ToolOutcome = { ok: true; value: unknown } | { ok: false; error: unknown }

declare module '@deepseek-ai/cordis' {
  interface Events {
    /** Waterfall: allow | deny | ask. The innermost answer is allow. */
    'tools/pre-execute'(call: ToolInvocation, next: () => Promise<PreDecision>): Promise<PreDecision>
    /** Waterfall around the body (timeouts, metrics). */
    'tools/execute'(call: ToolInvocation, next: () => Promise<ToolOutcome>): Promise<ToolOutcome>
    /** Waterfall over the result: accept (return next()), replace or block (return another result). */
    'tools/post-execute'(call: ToolInvocation, result: ToolResult, next: () => Promise<ToolResult>): Promise<ToolResult>
  }
}

/** What one step's tool calls run with. */
export interface PipelineEnv {
  ctx: Context
  session: Session
  lookup(name: string): ToolDefinition | undefined
  /** The context a tool's body runs with (its registering plugin's); `ctx` when unknown. */
  ownerOf?(name: string): Context | undefined
  guards: readonly ToolGuard[]
  signal: AbortSignal
  cwd: string
  policy: ExecPolicy
  approval: ApprovalPolicy
  /** Whether the surface can answer approvals at all. */
  canAsk: boolean
  requestApproval(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalOutcome>
  onProgress?(callId: string, update: ToolProgress): void
}

type Prepared = { block: ToolCallBlock; args: Json; invocation?: ToolInvocation; problem?: string }

function prepare(env: PipelineEnv, block: ToolCallBlock): Prepared {
  let args: Json = null
  try {
    args = block.arguments.trim() ? JSON.parse(block.arguments) as Json : {}
  } catch (error) {
    return { block, args, problem: `The arguments of ${block.name} are not valid JSON (${(error as Error).message}). Call the tool again with a JSON object.` }
  }
  const tool = env.lookup(block.name)
  if (!tool) return { block, args, problem: `Unknown tool "${block.name}". Use one of the tools listed in your instructions.` }
  const parsed = tool.parameters.safeParse(args)
  if (!parsed.success) {
    return { block, args, problem: `Invalid arguments for ${block.name}: ${describeIssues(parsed.error)}. Fix them and call again.` }
  }
  return { block, args, invocation: { callId: block.id, name: block.name, args: parsed.data, sessionId: env.session.id, tool } }
}

const text = (t: string): ToolContent[] => [{ type: 'text', text: t }]
const errorResult = (message: string): ToolResult => ({ content: text(message), isError: true })

function finalize(result: ToolResult): ToolResult {
  const content = result.content.filter((part) => part.type !== 'text' || part.text.length > 0)
  return { content: content.length ? content : text('(no output)'), isError: result.isError }
}

function describeFailure(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'Cancelled: the user stopped this call.'
  if (isDshError(error)) return `Error (${error.code}): ${error.message}${error.hint ? `\nHint: ${error.hint}` : ''}`
  return `Error: ${error instanceof Error ? error.message : String(error)}`
}

async function runOne(env: PipelineEnv, call: ToolInvocation): Promise<ToolResult> {
  const { ctx, signal } = env
  const decision = await ctx.waterfall('tools/pre-execute', call, async () => ({ action: 'allow' }) as PreDecision)
  if (decision.action === 'deny') return errorResult(`Denied: ${decision.reason}`)
  if (decision.action === 'ask' && env.approval !== 'never') {
    const outcome = await env.requestApproval({
      kind: 'tool', callId: call.callId, tool: call.name, title: call.name, reason: decision.reason,
      rawInput: call.args as Json, scope: { key: `tool:${call.name}`, label: `every ${call.name} call in this session` },
    }, signal)
    if (outcome === 'reject') {
      return errorResult(env.canAsk
        ? 'The user rejected this call. Do not retry it unchanged; ask or choose another way.'
        : `Not run: it needs approval (${decision.reason}), and no one can approve on this surface (a headless run denies what needs approval).`)
    }
    if (outcome === 'cancelled') return errorResult('Cancelled: the approval request was cancelled.')
  }
  for (const guard of env.guards) {
    const reason = await guard(call)
    if (reason) return errorResult(`Denied: ${reason}`)
  }
  const outcome = await ctx.waterfall('tools/execute', call, async (): Promise<ToolOutcome> => {
    try {
      return { ok: true, value: await call.tool.execute(call.args, {
        callId: call.callId, sessionId: call.sessionId, cwd: env.cwd, policy: env.policy, signal, ctx: env.ownerOf?.(call.name) ?? ctx,
        approvalAvailable: env.canAsk,
        requestApproval: (request) => env.requestApproval({ ...request, callId: call.callId, tool: call.name }, signal),
        log: (type, data, opts) => { env.session.append(type, data, opts) },
        progress: (update) => env.onProgress?.(call.callId, update),
      }) }
    } catch (error) {
      return { ok: false, error }
    }
  })
  let result: ToolResult
  if (outcome.ok) {
    const rendered = call.tool.output.render(outcome.value, call.args)
    result = { content: typeof rendered === 'string' ? text(rendered) : rendered, isError: !!call.tool.output.isError?.(outcome.value) }
  } else {
    result = errorResult(describeFailure(outcome.error, signal))
  }
  return ctx.waterfall('tools/post-execute', call, result, async () => result)
}

async function settle(env: PipelineEnv, p: Prepared): Promise<ToolResult> {
  if (!p.invocation) return errorResult(p.problem ?? 'Invalid call.')
  try {
    return finalize(await runOne(env, p.invocation))
  } catch (error) {
    return errorResult(describeFailure(error, env.signal))
  }
}

/**
 * Runs one step's tool calls. For each call: `tool/call` is logged and made durable
 * before anything runs; then pre-execute → approval → guards → execute → post-execute →
 * finalize; `tool/result` is logged in model order, even when consecutive
 * concurrency-safe calls run in parallel. After a cancel, calls that never started get
 * a synthetic result so every call in the history has one.
 */
export async function runToolCalls(env: PipelineEnv, blocks: readonly ToolCallBlock[]): Promise<void> {
  const prepared = blocks.map((block) => prepare(env, block))
  let i = 0
  while (i < prepared.length) {
    const first = prepared[i]!
    let end = i + 1
    if (first.invocation?.tool.concurrencySafe) {
      while (end < prepared.length && prepared[end]!.invocation?.tool.concurrencySafe) end++
    }
    const group = prepared.slice(i, end)
    i = end
    if (env.signal.aborted) {
      for (const p of group) {
        env.session.append('tool/result', { callId: p.block.id, name: p.block.name, content: text('Cancelled before it started.'), isError: true, synthetic: true })
      }
      continue
    }
    for (const p of group) env.session.append('tool/call', { callId: p.block.id, name: p.block.name, args: p.args })
    await env.session.flush()
    failpoint('tools.calls.flushed')
    const running = group.map((p) => settle(env, p))
    for (let k = 0; k < group.length; k++) {
      const result = await running[k]!
      const p = group[k]!
      env.session.append('tool/result', { callId: p.block.id, name: p.block.name, content: result.content, isError: result.isError })
      failpoint('tools.result.logged')
    }
  }
}
