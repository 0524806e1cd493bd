/**
 * OpenAI chat-completions SSE `data:` payloads → `StreamChunk`s (no I/O).
 *
 * Contract (on top of the StreamChunk contract):
 * - `reasoning_content` deltas feed a reasoning block, `content` deltas a text block; at most
 *   one of the two is open at a time (a switch closes the current one and opens a new one).
 * - `tool_calls` deltas are grouped by their `index`; each opens a tool-call block (closing an
 *   open text/reasoning block) and `function.arguments` fragments pass through raw.
 * - `finish_reason`: stop→stop, tool_calls/function_call→tool-calls, length→max-tokens,
 *   DeepSeek's insufficient_system_resource→SERVER failure; anything else→stop. A 'stop' with
 *   tool calls present is reported as 'tool-calls'.
 * - The stream is complete at `[DONE]` or once a `finish_reason` was seen; ending earlier is
 *   TRANSPORT. No text and no tool call (and not max-tokens) is EMPTY_RESPONSE.
 */
import type { FinishReason, LlmFailure, StreamChunk, Usage } from '@dsh/protocol'
import { AttemptFailure, BlockTracker, failure } from '@dsh/core'

interface ChatUsage {
  prompt_tokens?: number
  completion_tokens?: number
  prompt_cache_hit_tokens?: number
  prompt_tokens_details?: { cached_tokens?: number } | null
  completion_tokens_details?: { reasoning_tokens?: number } | null
}

interface ChatToolCallDelta { index?: number; id?: string; function?: { name?: string | null; arguments?: string | null } }

interface ChatChunk {
  choices?: { delta?: { content?: string | null; reasoning_content?: string | null; tool_calls?: ChatToolCallDelta[] | null }; finish_reason?: string | null }[]
  usage?: ChatUsage | null
  error?: { message?: string; type?: string; code?: unknown }
}

/** OpenAI / DeepSeek usage → `Usage`; DeepSeek's `prompt_cache_hit_tokens` wins over `cached_tokens`. */
export function mapChatUsage(raw: ChatUsage): Usage {
  const usage: Usage = { inputTokens: raw.prompt_tokens ?? 0, outputTokens: raw.completion_tokens ?? 0 }
  const cached = raw.prompt_cache_hit_tokens ?? raw.prompt_tokens_details?.cached_tokens
  if (cached !== undefined) usage.cacheReadTokens = cached
  const reasoning = raw.completion_tokens_details?.reasoning_tokens
  if (reasoning !== undefined) usage.reasoningTokens = reasoning
  return usage
}

export class ChatStreamDecoder {
  /** True after `[DONE]`: the caller stops reading. */
  done = false
  private readonly blocks = new BlockTracker()
  private current: { index: number; kind: 'text' | 'reasoning' } | undefined
  private readonly tools = new Map<number, number>()
  private finishReason: string | undefined
  private usage: Usage | undefined

  constructor(private readonly provider: string, private readonly apiKey: string) {}

  /** One SSE `data` payload. Throws `AttemptFailure` for unparsable JSON or an error payload. */
  push(data: string): StreamChunk[] {
    if (data.trim() === '[DONE]') {
      this.done = true
      return []
    }
    let chunk: ChatChunk
    try {
      chunk = JSON.parse(data) as ChatChunk
    } catch {
      throw this.fault('MALFORMED_RESPONSE', `provider "${this.provider}" sent a data line that is not JSON: ${data.slice(0, 200)}`)
    }
    if (typeof chunk !== 'object' || chunk === null) throw this.fault('MALFORMED_RESPONSE', `provider "${this.provider}" sent a non-object data line`)
    if (chunk.error) throw this.fault('SERVER', `provider "${this.provider}" reported an error mid-stream: ${chunk.error.message ?? JSON.stringify(chunk.error)}`)
    if (chunk.usage) this.usage = mapChatUsage(chunk.usage)
    const out: StreamChunk[] = []
    const choice = chunk.choices?.[0]
    if (!choice) return out
    const delta = choice.delta ?? {}
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') this.feed('reasoning', delta.reasoning_content, out)
    if (typeof delta.content === 'string' && delta.content !== '') this.feed('text', delta.content, out)
    for (const [position, call] of (delta.tool_calls ?? []).entries()) this.feedTool(call, position, out)
    if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason
    return out
  }

  /** The stream ended (at `[DONE]` or end of body): the closing chunks. */
  end(): StreamChunk[] {
    if (!this.done && this.finishReason === undefined) {
      return this.fail(this.failure('TRANSPORT', `provider "${this.provider}" stream ended before completion`))
    }
    if (this.finishReason === 'insufficient_system_resource') {
      return this.fail(this.failure('SERVER', `provider "${this.provider}" ran out of resources mid-answer`))
    }
    const reason = this.reason()
    if (!this.blocks.hasContent && reason !== 'max-tokens') {
      return this.fail(this.failure('EMPTY_RESPONSE', `provider "${this.provider}" returned no text and no tool call`))
    }
    return this.blocks.finish(reason, this.usage)
  }

  /** Closing chunks for a failed or aborted attempt (open blocks closed, usage if known). */
  fail(error: LlmFailure | 'aborted'): StreamChunk[] {
    return error === 'aborted' ? this.blocks.finish('aborted', this.usage) : this.blocks.finish('error', this.usage, error)
  }

  private reason(): FinishReason {
    switch (this.finishReason) {
      case 'length': return 'max-tokens'
      case 'tool_calls':
      case 'function_call': return 'tool-calls'
      default: return this.tools.size > 0 ? 'tool-calls' : 'stop'
    }
  }

  private feed(kind: 'text' | 'reasoning', text: string, out: StreamChunk[]): void {
    if (this.current?.kind !== kind) {
      this.closeCurrent(out)
      const { index, chunk } = this.blocks.start({ kind })
      out.push(chunk)
      this.current = { index, kind }
    }
    out.push(this.blocks.delta(this.current.index, text))
  }

  private feedTool(call: ChatToolCallDelta, position: number, out: StreamChunk[]): void {
    const key = call.index ?? position
    let index = this.tools.get(key)
    if (index === undefined) {
      this.closeCurrent(out)
      const started = this.blocks.start({ kind: 'tool-call', id: call.id ?? `call_${key}`, name: call.function?.name ?? '' })
      out.push(started.chunk)
      index = started.index
      this.tools.set(key, index)
    }
    const args = call.function?.arguments
    if (typeof args === 'string' && args !== '') out.push(this.blocks.delta(index, args))
  }

  private closeCurrent(out: StreamChunk[]): void {
    if (this.current && this.blocks.isOpen(this.current.index)) out.push(this.blocks.end(this.current.index))
    this.current = undefined
  }

  private failure(code: Parameters<typeof failure>[0], message: string): LlmFailure {
    return failure(code, message, { provider: this.provider, apiKey: this.apiKey })
  }

  private fault(code: Parameters<typeof failure>[0], message: string): AttemptFailure {
    return new AttemptFailure(this.failure(code, message))
  }
}
