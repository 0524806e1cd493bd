import type { AssistantBlock, ToolContent, UserContent } from './content.js'
import type { ErrorInfo } from './errors.js'
import type { Json } from './json.js'
import type { FinishReason, ModelConfig, ReasoningEffort, Usage } from './llm.js'
import type { ToolSchema } from './tools.js'

/** Why a turn ended. `interrupted` is written by load repair after a crash. */
export type TurnEndReason = 'completed' | 'max-tokens' | 'aborted' | 'error' | 'rejected' | 'max-steps' | 'interrupted'

/**
 * The core vocabulary: event type → data. Plugins add their own types by
 * declaration merging (`declare module '@dsh/protocol' { interface SessionEventMap {...} }`).
 */
export interface SessionEventMap {
  /** `prompts`: the ids of the queued prompts this turn takes (when the surface gave ids). */
  'turn/start': { turn: number; prompts?: string[] }
  'user/message': { id: string; content: UserContent[]; via?: 'prompt' | 'steer' | 'inject' | 'followup' }
  'step/start': { turn: number; step: number }
  /** What requests are sent with: logged when it changes, not every step. */
  'request/header': { system: string; tools: ToolSchema[]; config: ModelConfig }
  /** A streamed fragment, for live UIs and replay; never model-visible. */
  'assistant/chunk': { messageId: string; kind: 'text' | 'reasoning'; delta: string }
  'assistant/message': { id: string; content: AssistantBlock[]; finish: FinishReason; interrupted?: boolean; usage?: Usage }
  /** Logged before the call's body runs. `args` is the parsed JSON, or null when unparsable. */
  'tool/call': { callId: string; name: string; args: Json }
  'tool/result': { callId: string; name: string; content: ToolContent[]; isError: boolean; synthetic?: boolean }
  'step/end': { turn: number; step: number; usage?: Usage }
  'turn/end': { turn: number; reason: TurnEndReason; error?: ErrorInfo }
  /**
   * A surface replacement: derivation shows `summary` in place of the model-visible
   * events with seq in [fromSeq, toSeq]. The replaced events stay in the log.
   */
  'history/replace': { fromSeq: number; toSeq: number; summary: string }
  /** The user switched model (or effort); applies from the next request. */
  'model/select': { provider: string; model: string; reasoningEffort?: ReasoningEffort }
  'llm/retry': { attempt: number; code: string; message: string; delayMs: number }
  'notice': { level: 'info' | 'warn' | 'error'; message: string; source?: string }
}

export type SessionEventType = keyof SessionEventMap & string

export interface SessionEvent<T extends string = string> {
  type: T
  seq: number
  time: number
  data: T extends keyof SessionEventMap ? SessionEventMap[T] : Json
  /** Readers that do not know this type may skip it. */
  ignorable?: true
}

export type AnySessionEvent = { [K in SessionEventType]: SessionEvent<K> }[SessionEventType]

/** Event types every reader of this version understands. */
export const CORE_EVENT_TYPES: ReadonlySet<string> = new Set<SessionEventType>([
  'turn/start', 'user/message', 'step/start', 'request/header', 'assistant/chunk', 'assistant/message',
  'tool/call', 'tool/result', 'step/end', 'turn/end', 'history/replace', 'model/select', 'llm/retry', 'notice',
])

/** Session file header (the first JSONL line). */
export interface SessionHeader {
  format: 'dsh-session'
  version: number
  id: string
  created: number
  cwd: string
  /** The parent session, for subagents and forks. */
  parent?: { id: string; callId?: string; fork?: boolean }
  [key: string]: Json | undefined
}

export const SESSION_FORMAT_VERSION = 1
