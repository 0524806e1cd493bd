import type { ErrorInfo, GenerateRequest, LlmFailure, ReasoningEffort, TurnEndReason, UserContent } from '@dsh/protocol'
import type { Agent } from './agent.js'

export interface AgentOptions {
  provider?: string | undefined
  model?: string | undefined
  maxTokens?: number | undefined
  reasoningEffort?: ReasoningEffort | undefined
  /** Steps per turn before the turn ends with `max-steps`. */
  maxSteps?: number | undefined
  /** Which registered tools this agent offers (all when absent). */
  toolFilter?: ((name: string) => boolean) | undefined
}

export interface TurnOutcome {
  turn: number
  reason: TurnEndReason
  error?: ErrorInfo
  /** The text of the turn's last assistant message. */
  text: string
}

export interface QueuedMessage {
  content: UserContent[]
  via: 'prompt' | 'steer' | 'inject' | 'followup'
  /** The id of the `user/message` it becomes (default `u-<seq>`). */
  id?: string
}

/** The request about to be sent; `agent/request` listeners may return a changed copy. */
export type StepRequest = Omit<GenerateRequest, 'signal'>

export type RetryDecision = { retry: false } | { retry: true; delayMs: number }

declare module '@deepseek-ai/cordis' {
  interface Events {
    /** Waterfall over what enters a step: return the (rewritten) messages, or null to reject them. */
    'agent/pre-step'(agent: Agent, messages: QueuedMessage[], next: () => Promise<QueuedMessage[] | null>): Promise<QueuedMessage[] | null>
    /** Waterfall over the request config. */
    'agent/request'(agent: Agent, request: StepRequest, next: () => Promise<StepRequest>): Promise<StepRequest>
    /** Waterfall: decide whether a failed attempt is retried (the retry policy plugin). */
    'agent/request-error'(agent: Agent, failure: LlmFailure, attempt: number, next: () => Promise<RetryDecision>): Promise<RetryDecision>
    /** Serial: the turn is about to end; return true after queueing next-step input to continue it. */
    'agent/turn-stopping'(agent: Agent, turn: number): boolean | undefined | Promise<boolean | undefined>
    /** A turn ended (after `turn/end` is logged and flushed). */
    'agent/turn-end'(agent: Agent, outcome: TurnOutcome): void
  }
}
