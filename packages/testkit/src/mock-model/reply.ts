/** A reply step made concrete for one request: ids assigned, usage settled (pure). */
import type { FinishKind, ReplyStep } from './script.js'

export interface ReplyToolCall { id: string; name: string; arguments: string }

export interface Reply {
  text: string
  reasoning: string
  toolCalls: ReplyToolCall[]
  finish: FinishKind
  /** `input` includes `cacheRead` (OpenAI convention; the Anthropic renderer splits them). */
  usage: { input: number; output: number; cacheRead: number }
  chunkSize: number
}

/** What a renderer needs besides the reply. */
export interface RenderContext {
  /** Response id (`chatcmpl-mock-N` / `msg_mock_N`). */
  id: string
  model: string
  /** OpenAI: `stream_options.include_usage` was requested. */
  includeUsage: boolean
}

/** A streamed answer: SSE frames (each ending in a blank line) and what to do after them. */
export interface StreamPlan {
  frames: string[]
  end: 'close' | 'destroy' | 'hang'
}

export const DEFAULT_CHUNK_SIZE = 16
export const DEFAULT_PARTIAL_TEXT = 'partial answer'

function estimate(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4))
}

/** `requestChars`: the length of the request body's text (the default input-token estimate). */
export function normalizeReply(step: ReplyStep, requestChars: number, nextCallId: () => string): Reply {
  const toolCalls = (step.toolCalls ?? []).map((call): ReplyToolCall => ({
    id: call.id ?? nextCallId(),
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
  }))
  const text = step.text ?? ''
  const reasoning = step.reasoning ?? ''
  const outputChars = text.length + reasoning.length + toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0)
  return {
    text,
    reasoning,
    toolCalls,
    finish: step.finish ?? (toolCalls.length > 0 ? 'tool-calls' : 'stop'),
    usage: {
      input: step.usage?.input ?? estimate(requestChars),
      output: step.usage?.output ?? estimate(outputChars),
      cacheRead: step.usage?.cacheRead ?? 0,
    },
    chunkSize: step.chunkSize ?? DEFAULT_CHUNK_SIZE,
  }
}

/** Splits text into pieces of `size` characters (code points are not split). */
export function split(text: string, size: number): string[] {
  const chars = [...text]
  const out: string[] = []
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''))
  return out
}

export function sseFrame(data: unknown, event?: string): string {
  const payload = typeof data === 'string' ? data : JSON.stringify(data)
  return `${event === undefined ? '' : `event: ${event}\n`}data: ${payload}\n\n`
}
