import type { AssistantBlock, ModelMessage } from './content.js'
import type { ErrorInfo } from './errors.js'
import type { ToolSchema } from './tools.js'

export interface Usage {
  inputTokens: number
  outputTokens: number
  /** Input tokens served from the provider's prompt cache (included in inputTokens). */
  cacheReadTokens?: number
  /** Input tokens written to the provider's prompt cache (included in inputTokens). */
  cacheWriteTokens?: number
  reasoningTokens?: number
}

export type FinishReason = 'stop' | 'tool-calls' | 'max-tokens' | 'aborted' | 'error'

/** Stable failure codes of one provider attempt. */
export type LlmErrorCode =
  | 'AUTH' | 'RATE_LIMIT' | 'SERVER' | 'TIMEOUT' | 'TRANSPORT' | 'CONTEXT_WINDOW_EXCEEDED'
  | 'EMPTY_RESPONSE' | 'MALFORMED_RESPONSE' | 'ABORTED' | 'BAD_REQUEST' | 'NO_CREDENTIALS' | 'UNKNOWN_PROVIDER'

export interface LlmFailure extends ErrorInfo {
  code: LlmErrorCode
  /** Whether another attempt may succeed (a retry policy reads this). */
  retryable: boolean
  /** Server-requested delay (from `retry-after`), when given. */
  retryAfterMs?: number
  status?: number
  provider?: string
}

export type BlockKind = { kind: 'text' } | { kind: 'reasoning' } | { kind: 'tool-call'; id: string; name: string }

/**
 * The closed stream vocabulary every adapter produces. Contract:
 * blocks are opened with `block-start`, fed with deltas of their kind, closed with
 * `block-end` carrying the assembled block; `usage` (if any) comes before `finish`;
 * `finish` is the last chunk, always present; tool arguments stay raw JSON text.
 * A failure is `finish {reason: 'error', error}`; an abort is `finish {reason: 'aborted'}`.
 */
export type StreamChunk =
  | { type: 'block-start'; index: number; block: BlockKind }
  | { type: 'text-delta'; index: number; text: string }
  | { type: 'reasoning-delta'; index: number; text: string }
  | { type: 'tool-call-delta'; index: number; json: string }
  | { type: 'block-end'; index: number; block: AssistantBlock }
  | { type: 'usage'; usage: Usage }
  | { type: 'finish'; reason: FinishReason; error?: LlmFailure }

/** Every reasoning effort, in increasing order (one list for schemas, flags and config options). */
export const REASONING_EFFORTS = ['off', 'low', 'medium', 'high', 'max'] as const
export type ReasoningEffort = typeof REASONING_EFFORTS[number]

/** The model configuration actually sent; logged in `request/header`. */
export interface ModelConfig {
  provider: string
  model: string
  maxTokens?: number
  reasoningEffort?: ReasoningEffort
  temperature?: number
}

export interface GenerateRequest {
  config: ModelConfig
  system: string
  messages: ModelMessage[]
  tools: ToolSchema[]
  signal: AbortSignal
}

/** A provider endpoint resolved with its credential (never logged). */
export interface ProviderEndpoint {
  id: string
  /** Adapter protocol: 'openai' (chat completions) or 'anthropic' (messages). */
  protocol: string
  baseUrl: string
  apiKey: string
  headers?: Record<string, string>
  /** Milliseconds without a stream byte before the attempt fails with TIMEOUT. */
  idleTimeoutMs?: number
}

/** One adapter call is one provider attempt. Retry is a policy plugin's business. */
export interface LlmAdapter {
  protocol: string
  stream(request: GenerateRequest, endpoint: ProviderEndpoint): AsyncIterable<StreamChunk>
}
