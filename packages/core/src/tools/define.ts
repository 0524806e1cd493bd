import type { Context } from '@deepseek-ai/cordis'
import type {
  ApprovalOutcome, ApprovalRequest, CallCard, ExecPolicy, Json, ResultCard, ToolContent, ToolKind, ToolResult,
} from '@dsh/protocol'
import type { z } from 'zod'

/** Live progress of a running call, for surfaces (never model-visible, never logged). */
export type ToolProgress = { type: 'output'; data: string }

/** What a tool body sees of the world. Tools reach files and processes only through the seams on `ctx`. */
export interface ToolCallContext {
  callId: string
  sessionId: string
  /** The session's workspace; relative paths resolve against it. */
  cwd: string
  /** The sandbox policy this call runs under (from the session's permission preset). */
  policy: ExecPolicy
  signal: AbortSignal
  /** The plugin tree: `ctx.fs`, `ctx.shell`, `ctx.subprocess`, `ctx.sandbox`, … */
  ctx: Context
  /** Whether this surface has someone to answer approvals (headless has not). */
  approvalAvailable: boolean
  /** Ask the surface's answerer (logged). Headless has none: the outcome is `reject`. */
  requestApproval(request: Omit<ApprovalRequest, 'callId' | 'tool'>): Promise<ApprovalOutcome>
  /** Append a plugin event to the session (JSON data only). */
  log(type: string, data: Json, opts?: { ignorable?: boolean }): void
  progress(update: ToolProgress): void
}

/**
 * A tool: parameters (zod, validated before anything runs; also the JSON Schema sent to
 * the model), a body returning a canonical value, a model-facing renderer, and optional
 * pure presenters for UI cards (no I/O, clock or session reads: they also run on replay).
 */
export interface ToolDefinition<P extends z.ZodType = z.ZodType, V = any> {
  name: string
  description: string
  parameters: P
  /** The JSON Schema sent to the model, when given as such (client-defined tools); else derived from `parameters`. */
  inputSchema?: Record<string, Json>
  /** Calls that may run in parallel with other concurrency-safe calls of the same step. */
  concurrencySafe?: boolean
  kind?: ToolKind
  execute(args: z.output<P>, call: ToolCallContext): Promise<V>
  output: {
    /** The model text (or parts) for a value. */
    render(value: V, args: z.output<P>): string | ToolContent[]
    /** A value that is a failure the model should see as an error result. */
    isError?(value: V): boolean
  }
  presentCall?(args: z.output<P>): CallCard
  presentResult?(args: z.output<P>, result: ToolResult): ResultCard
}

export function defineTool<P extends z.ZodType, V>(definition: ToolDefinition<P, V>): ToolDefinition<P, V> {
  return definition
}

/** Thrown by tool bodies for failures the model should read; becomes an error result. */
export class ToolError extends Error {
  override name = 'ToolError'
  constructor(message: string, readonly code = 'TOOL_ERROR') {
    super(message)
  }
}
