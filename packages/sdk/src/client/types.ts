import type { CLIENT_REQUESTS, MethodName, ParamsOf, ResultOf } from '@dsh/host-api'
import type { z } from 'zod'

/**
 * The methods a `dsh sdk` client may call: every method of the host table that the sdk
 * carrier serves (all but the web carrier's `session/respond`). Kept as a literal list
 * so a table change that the client does not follow shows up (the parity test compares
 * it with the server's `rpc/describe`).
 */
export const CLIENT_METHODS = [
  'initialize', 'host/describe', 'models/list', 'settings/read', 'settings/update',
  'credentials/describe', 'credentials/set', 'credentials/unset', 'rpc/describe',
  'session/create', 'session/open', 'session/fork', 'session/list', 'session/get', 'session/rename',
  'session/archive', 'session/delete', 'session/close', 'session/history', 'session/subscribe',
  'session/unsubscribe', 'session/prompt', 'session/cancel', 'session/set_model', 'session/set_effort',
  'session/set_mode', 'session/set_preset', 'session/command', 'session/export',
] as const satisfies readonly MethodName[]

export type SdkMethod = typeof CLIENT_METHODS[number]
export type { ParamsOf, ResultOf }

type RequestParams<M extends keyof typeof CLIENT_REQUESTS> = z.output<typeof CLIENT_REQUESTS[M]['params']>
type RequestResult<M extends keyof typeof CLIENT_REQUESTS> = z.input<typeof CLIENT_REQUESTS[M]['result']>

export type ApprovalRequest = RequestParams<'approval/request'>
export type ApprovalDecision = RequestResult<'approval/request'>['decision']
export type QuestionRequest = RequestParams<'question/request'>
export type QuestionAnswers = RequestResult<'question/request'>['answers']
export type ToolCallRequest = RequestParams<'tool/call'>
export type ToolCallResult = RequestResult<'tool/call'>

export interface AnswerContext { signal: AbortSignal }

/** Decides an approval. Default (none given anywhere): "reject". */
export type ApprovalHandler = (request: ApprovalRequest, context: AnswerContext) => ApprovalDecision | Promise<ApprovalDecision>
/** Answers the `question` tool; without one, the question is refused. */
export type QuestionHandler = (request: QuestionRequest, context: AnswerContext) => QuestionAnswers | Promise<QuestionAnswers>

/** A tool this program executes: the model sees name, description and inputSchema. */
export interface ClientTool {
  name: string
  description: string
  /** A JSON Schema object (`type: "object"`). */
  inputSchema: Record<string, unknown>
  /** A string or a ToolCallResult is the result; a throw becomes an error result the model reads. */
  execute(args: any, context: AnswerContext & { sessionId: string; toolCallId: string }): string | ToolCallResult | Promise<string | ToolCallResult>
}

export interface SessionEvent { type: string; seq: number; time: number; data: any; ignorable?: true }
export type EventView = ResultOf<'session/history'>['items'][number]['view']
export interface SessionUpdate { event: SessionEvent; view: EventView }

export interface Usage { inputTokens: number; outputTokens: number; reasoningTokens?: number; cacheReadTokens?: number; cacheWriteTokens?: number }

export interface RunResult {
  /** The turn's final assistant text ("" when it ended without one). */
  text: string
  /** The `turn/end` reason: completed, aborted, error, rejected, max-tokens, max-steps, interrupted. */
  reason: string
  /** Summed over the turn's steps. */
  usage: Usage
  /** Every durable event of the turn, turn/start … turn/end. */
  events: SessionEvent[]
  promptId: string
}

export interface RunOptions {
  onEvent?: (event: SessionEvent, view: EventView) => void
  onApproval?: ApprovalHandler
  onQuestion?: QuestionHandler
  /** Aborting cancels the turn (session/cancel) and rejects with the abort reason. */
  signal?: AbortSignal
}
