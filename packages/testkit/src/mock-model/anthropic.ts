/**
 * Anthropic Messages wire format for the mock (pure). Streams use the real event names:
 * message_start (input usage, cache reads split out of input_tokens), ping,
 * content_block_start/delta/stop per block (thinking with thinking_delta + signature_delta,
 * text with text_delta, tool_use with input_json_delta), message_delta (stop_reason, output
 * usage) and message_stop; failures inside a stream are `error` events.
 */
import type { FaultKind } from './script.js'
import { split, sseFrame, type RenderContext, type Reply, type StreamPlan } from './reply.js'

const STOP = { 'stop': 'end_turn', 'tool-calls': 'tool_use', 'max-tokens': 'max_tokens' } as const

function event(type: string, data: Record<string, unknown>): string {
  return sseFrame({ type, ...data }, type)
}

/** The deterministic signature the mock puts on a thinking block. */
export function mockSignature(responseId: string): string {
  return `mock-signature-${responseId}`
}

function usage(reply: Reply): Record<string, number> {
  return {
    input_tokens: reply.usage.input - reply.usage.cacheRead,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: reply.usage.cacheRead,
    output_tokens: reply.usage.output,
  }
}

function messageStart(reply: Reply, ctx: RenderContext): string {
  return event('message_start', {
    message: {
      id: ctx.id, type: 'message', role: 'assistant', model: ctx.model, content: [],
      stop_reason: null, stop_sequence: null, usage: { ...usage(reply), output_tokens: 1 },
    },
  })
}

function toolInput(args: string): unknown {
  try {
    return JSON.parse(args)
  } catch {
    return {}
  }
}

function ending(reply: Reply): string[] {
  return [
    event('message_delta', { delta: { stop_reason: STOP[reply.finish], stop_sequence: null }, usage: { output_tokens: reply.usage.output } }),
    event('message_stop', {}),
  ]
}

export function anthropicStream(reply: Reply, ctx: RenderContext): StreamPlan {
  const frames = [messageStart(reply, ctx), event('ping', {})]
  let index = 0
  if (reply.reasoning !== '') {
    frames.push(event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }))
    for (const piece of split(reply.reasoning, reply.chunkSize)) {
      frames.push(event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } }))
    }
    frames.push(event('content_block_delta', { index, delta: { type: 'signature_delta', signature: mockSignature(ctx.id) } }))
    frames.push(event('content_block_stop', { index }))
    index++
  }
  if (reply.text !== '') {
    frames.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }))
    for (const piece of split(reply.text, reply.chunkSize)) frames.push(event('content_block_delta', { index, delta: { type: 'text_delta', text: piece } }))
    frames.push(event('content_block_stop', { index }))
    index++
  }
  for (const call of reply.toolCalls) {
    frames.push(event('content_block_start', { index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } }))
    for (const piece of split(call.arguments, reply.chunkSize)) {
      frames.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } }))
    }
    frames.push(event('content_block_stop', { index }))
    index++
  }
  frames.push(...ending(reply))
  return { frames, end: 'close' }
}

export function anthropicJson(reply: Reply, ctx: RenderContext): Record<string, unknown> {
  const content: Record<string, unknown>[] = []
  if (reply.reasoning !== '') content.push({ type: 'thinking', thinking: reply.reasoning, signature: mockSignature(ctx.id) })
  if (reply.text !== '') content.push({ type: 'text', text: reply.text })
  for (const call of reply.toolCalls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: toolInput(call.arguments) })
  return {
    id: ctx.id, type: 'message', role: 'assistant', model: ctx.model, content,
    stop_reason: STOP[reply.finish], stop_sequence: null, usage: usage(reply),
  }
}

export function anthropicFault(kind: FaultKind, text: string, reply: Reply, ctx: RenderContext): StreamPlan {
  const partial = [
    messageStart(reply, ctx),
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
  ]
  switch (kind) {
    case 'cut': return { frames: partial, end: 'destroy' }
    case 'stall': return { frames: partial, end: 'hang' }
    case 'malformed': return { frames: [messageStart(reply, ctx), 'event: content_block_start\ndata: {"type": "content_block_start", oops\n\n'], end: 'close' }
    case 'empty': return { frames: [messageStart(reply, ctx), ...ending({ ...reply, finish: 'stop' })], end: 'close' }
  }
}

export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400: return 'invalid_request_error'
    case 401: return 'authentication_error'
    case 403: return 'permission_error'
    case 404: return 'not_found_error'
    case 413: return 'request_too_large'
    case 429: return 'rate_limit_error'
    case 529: return 'overloaded_error'
    default: return status >= 500 ? 'api_error' : 'invalid_request_error'
  }
}

export function anthropicErrorBody(status: number, message: string): Record<string, unknown> {
  return { type: 'error', error: { type: anthropicErrorType(status), message } }
}

/** A 200 stream that fails mid-way with an `error` event (e.g. status 529 → overloaded_error). */
export function anthropicStreamError(status: number, message: string, reply: Reply, ctx: RenderContext): StreamPlan {
  return { frames: [messageStart(reply, ctx), event('error', { error: { type: anthropicErrorType(status), message } })], end: 'close' }
}
