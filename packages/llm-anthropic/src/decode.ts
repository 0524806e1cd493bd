/**
 * Anthropic Messages SSE events → `StreamChunk`s (no I/O).
 *
 * Contract (on top of the StreamChunk contract):
 * - each content block (text, thinking, redacted_thinking, tool_use) maps to one block, opened
 *   at content_block_start and closed at content_block_stop; unknown block types are skipped.
 * - thinking signatures (signature_delta) and redacted payloads land on the reasoning block.
 * - a tool_use block that received no input fragment gets the fragment `{}` before it closes,
 *   so the deltas always concatenate to the final `arguments`.
 * - usage: inputTokens = input + cache reads + cache writes (Anthropic reports them apart);
 *   output from the last message_delta.
 * - stop_reason end_turn/stop_sequence/pause_turn/refusal→stop, tool_use→tool-calls,
 *   max_tokens/model_context_window_exceeded→max-tokens.
 * - `error` events: overloaded_error/api_error→SERVER, rate_limit_error→RATE_LIMIT,
 *   authentication_error/permission_error→AUTH, request_too_large→CONTEXT_WINDOW_EXCEEDED,
 *   invalid_request_error→BAD_REQUEST, other→SERVER.
 * - complete at message_stop or once a stop_reason was seen; ending earlier is TRANSPORT.
 *   No text and no tool call (and not max-tokens) is EMPTY_RESPONSE.
 */
import type { FinishReason, LlmErrorCode, LlmFailure, StreamChunk, Usage } from '@dsh/protocol'
import { AttemptFailure, BlockTracker, failure } from '@dsh/core'

interface RawUsage {
  input_tokens?: number | null
  output_tokens?: number | null
  cache_read_input_tokens?: number | null
  cache_creation_input_tokens?: number | null
}

interface RawEvent {
  type?: string
  index?: number
  message?: { usage?: RawUsage }
  content_block?: { type?: string; id?: string; name?: string; text?: string; thinking?: string; signature?: string; data?: string }
  delta?: { type?: string; text?: string; thinking?: string; signature?: string; partial_json?: string; stop_reason?: string | null }
  usage?: RawUsage
  error?: { type?: string; message?: string }
}

const ERROR_CODES: Record<string, LlmErrorCode> = {
  overloaded_error: 'SERVER',
  api_error: 'SERVER',
  rate_limit_error: 'RATE_LIMIT',
  authentication_error: 'AUTH',
  permission_error: 'AUTH',
  request_too_large: 'CONTEXT_WINDOW_EXCEEDED',
  invalid_request_error: 'BAD_REQUEST',
}

export class MessagesStreamDecoder {
  /** True after message_stop: the caller stops reading. */
  done = false
  private readonly blocks = new BlockTracker()
  /** Anthropic content index → our block index. */
  private readonly indices = new Map<number, number>()
  private readonly emptyTools = new Set<number>()
  private stopReason: string | undefined
  private raw: RawUsage | undefined

  constructor(private readonly provider: string, private readonly apiKey: string) {}

  /** One SSE event. Throws `AttemptFailure` for unparsable JSON or an `error` event. */
  push(data: string): StreamChunk[] {
    let event: RawEvent
    try {
      event = JSON.parse(data) as RawEvent
    } catch {
      throw this.fault('MALFORMED_RESPONSE', `provider "${this.provider}" sent a data line that is not JSON: ${data.slice(0, 200)}`)
    }
    if (typeof event !== 'object' || event === null) throw this.fault('MALFORMED_RESPONSE', `provider "${this.provider}" sent a non-object event`)
    const out: StreamChunk[] = []
    switch (event.type) {
      case 'message_start':
        this.mergeUsage(event.message?.usage)
        break
      case 'content_block_start':
        this.startBlock(event, out)
        break
      case 'content_block_delta':
        this.delta(event, out)
        break
      case 'content_block_stop': {
        const index = this.indices.get(event.index ?? -1)
        if (index === undefined || !this.blocks.isOpen(index)) break
        if (this.emptyTools.has(index)) out.push(this.blocks.delta(index, '{}'))
        out.push(this.blocks.end(index))
        break
      }
      case 'message_delta':
        if (event.delta?.stop_reason) this.stopReason = event.delta.stop_reason
        this.mergeUsage(event.usage)
        break
      case 'message_stop':
        this.done = true
        break
      case 'error': {
        const type = event.error?.type ?? 'unknown_error'
        throw this.fault(ERROR_CODES[type] ?? 'SERVER', `provider "${this.provider}" reported ${type} mid-stream: ${event.error?.message ?? ''}`)
      }
      default:
        break // ping and future event types
    }
    return out
  }

  /** The stream ended (at message_stop or end of body): the closing chunks. */
  end(): StreamChunk[] {
    if (!this.done && this.stopReason === undefined) {
      return this.fail(this.failure('TRANSPORT', `provider "${this.provider}" stream ended before completion`))
    }
    const reason = this.reason()
    if (!this.blocks.hasContent && reason !== 'max-tokens') {
      return this.fail(this.failure('EMPTY_RESPONSE', `provider "${this.provider}" returned no text and no tool call`))
    }
    return this.blocks.finish(reason, this.usage())
  }

  /** Closing chunks for a failed or aborted attempt (open blocks closed, usage if known). */
  fail(error: LlmFailure | 'aborted'): StreamChunk[] {
    return error === 'aborted' ? this.blocks.finish('aborted', this.usage()) : this.blocks.finish('error', this.usage(), error)
  }

  private reason(): FinishReason {
    switch (this.stopReason) {
      case 'tool_use': return 'tool-calls'
      case 'max_tokens':
      case 'model_context_window_exceeded': return 'max-tokens'
      default: return 'stop'
    }
  }

  private startBlock(event: RawEvent, out: StreamChunk[]): void {
    const block = event.content_block ?? {}
    const providerIndex = event.index ?? this.indices.size
    let started: { index: number; chunk: StreamChunk }
    switch (block.type) {
      case 'text':
        started = this.blocks.start({ kind: 'text' })
        out.push(started.chunk)
        if (block.text) out.push(this.blocks.delta(started.index, block.text))
        break
      case 'thinking':
        started = this.blocks.start({ kind: 'reasoning' })
        out.push(started.chunk)
        if (block.thinking) out.push(this.blocks.delta(started.index, block.thinking))
        if (block.signature) this.blocks.annotate(started.index, { signature: block.signature })
        break
      case 'redacted_thinking':
        started = this.blocks.start({ kind: 'reasoning' })
        out.push(started.chunk)
        this.blocks.annotate(started.index, { redacted: block.data ?? '' })
        break
      case 'tool_use':
        started = this.blocks.start({ kind: 'tool-call', id: block.id ?? `call_${providerIndex}`, name: block.name ?? '' })
        out.push(started.chunk)
        this.emptyTools.add(started.index)
        break
      default:
        return
    }
    this.indices.set(providerIndex, started.index)
  }

  private delta(event: RawEvent, out: StreamChunk[]): void {
    const index = this.indices.get(event.index ?? -1)
    const delta = event.delta
    if (index === undefined || !delta || !this.blocks.isOpen(index)) return
    switch (delta.type) {
      case 'text_delta':
        if (delta.text) out.push(this.blocks.delta(index, delta.text))
        break
      case 'thinking_delta':
        if (delta.thinking) out.push(this.blocks.delta(index, delta.thinking))
        break
      case 'signature_delta':
        if (delta.signature) this.blocks.annotate(index, { signature: delta.signature })
        break
      case 'input_json_delta':
        if (delta.partial_json) {
          this.emptyTools.delete(index)
          out.push(this.blocks.delta(index, delta.partial_json))
        }
        break
      default:
        break
    }
  }

  private mergeUsage(usage: RawUsage | undefined): void {
    if (!usage) return
    const merged: RawUsage = { ...this.raw }
    for (const [key, value] of Object.entries(usage) as [keyof RawUsage, number | null | undefined][]) {
      if (typeof value === 'number') merged[key] = value
    }
    this.raw = merged
  }

  private usage(): Usage | undefined {
    const raw = this.raw
    if (!raw) return undefined
    const cacheRead = raw.cache_read_input_tokens ?? undefined
    const cacheWrite = raw.cache_creation_input_tokens ?? undefined
    const usage: Usage = { inputTokens: (raw.input_tokens ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0), outputTokens: raw.output_tokens ?? 0 }
    if (cacheRead !== undefined) usage.cacheReadTokens = cacheRead
    if (cacheWrite !== undefined) usage.cacheWriteTokens = cacheWrite
    return usage
  }

  private failure(code: LlmErrorCode, message: string): LlmFailure {
    return failure(code, message, { provider: this.provider, apiKey: this.apiKey })
  }

  private fault(code: LlmErrorCode, message: string): AttemptFailure {
    return new AttemptFailure(this.failure(code, message))
  }
}
