import type { LlmFailure } from '@dsh/protocol'
import type { RetryDecision } from './types.js'

export interface RetryPolicy {
  maxAttempts: number
  baseDelayMs: number
  maxDelayMs: number
}

/**
 * Pure retry decision: retryable failures only, exponential backoff with full jitter,
 * a server's `retry-after` honoured (never waiting less than it asks, capped by maxDelayMs).
 */
export function decideRetry(policy: RetryPolicy, failure: LlmFailure, attempt: number, random = Math.random): RetryDecision {
  if (!failure.retryable || attempt >= policy.maxAttempts) return { retry: false }
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1))
  const jittered = Math.round(exp / 2 + random() * (exp / 2))
  const delayMs = failure.retryAfterMs !== undefined ? Math.min(policy.maxDelayMs, Math.max(failure.retryAfterMs, 0)) : jittered
  return { retry: true, delayMs }
}
