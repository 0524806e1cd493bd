import type { ModelMessage, SessionEvent, ToolSchema, Usage } from '@dsh/protocol'

/** Tokens charged for one image part (its base64 size says little about its token cost). */
export const IMAGE_TOKENS = 1_500

/** Pure estimate: about four characters per token. */
export function estimateText(text: string): number {
  return Math.ceil(text.length / 4)
}

/** Derived messages are reused across steps (the fold is incremental): estimate each once. */
const estimates = new WeakMap<ModelMessage, number>()

/** Pure estimate of one history message: its JSON form, images at a flat rate. */
export function estimateMessage(message: ModelMessage): number {
  let cached = estimates.get(message)
  if (cached === undefined) estimates.set(message, cached = measure(message))
  return cached
}

function measure(message: ModelMessage): number {
  let images = 0
  // image parts carry their bytes in `data`: count them flat instead of by length
  const json = JSON.stringify(message, (key, value: unknown) => {
    if (key === 'data' && typeof value === 'string') {
      images++
      return ''
    }
    return value
  })
  return estimateText(json) + images * IMAGE_TOKENS
}

/** Pure estimate of a whole request: system + tool schemas (JSON) + messages. */
export function estimateRequest(request: { system: string; tools: readonly ToolSchema[]; messages: readonly ModelMessage[] }): number {
  let total = estimateText(request.system) + estimateText(JSON.stringify(request.tools))
  for (const message of request.messages) total += estimateMessage(message)
  return total
}

/** How many tokens the next request holds, and where the number comes from. */
export interface ContextTokens {
  tokens: number
  window: number
  /** `usage`: the provider's count for the last answer plus an estimate of what came after it. */
  source: 'usage' | 'estimate'
}

/**
 * Pure: the provider's usage of the latest `assistant/message` (input + output) plus an
 * estimate of the model-visible messages logged after it — when no `history/replace` came
 * after that message (a replacement makes the provider's count stale). Otherwise undefined.
 * `estimateAfter(seq)` estimates the messages whose events come after `seq`.
 */
export function usageBaseline(events: readonly SessionEvent[], estimateAfter: (seq: number) => number): number | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!
    if (event.type === 'history/replace') return undefined
    if (event.type !== 'assistant/message') continue
    const usage = (event.data as { usage?: Usage }).usage
    if (!usage) return undefined
    return usage.inputTokens + usage.outputTokens + estimateAfter(event.seq)
  }
  return undefined
}
