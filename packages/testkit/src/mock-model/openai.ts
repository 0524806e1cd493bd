/**
 * OpenAI chat-completions wire format (DeepSeek flavour) for the mock (pure).
 * Streams look like the real thing: `chat.completion.chunk` objects, a first chunk with the
 * role, `reasoning_content` deltas, `tool_calls` deltas by index (id + name first, then
 * argument fragments), a chunk with `finish_reason`, a usage chunk with `choices: []` when
 * `stream_options.include_usage` was asked for, and `data: [DONE]`.
 */
import type { FaultKind } from './script.js'
import { split, sseFrame, type RenderContext, type Reply, type StreamPlan } from './reply.js'

const FINISH = { 'stop': 'stop', 'tool-calls': 'tool_calls', 'max-tokens': 'length' } as const

const CREATED = 1_700_000_000

function chunk(ctx: RenderContext, delta: Record<string, unknown>, finishReason: string | null = null): string {
  return sseFrame({
    id: ctx.id,
    object: 'chat.completion.chunk',
    created: CREATED,
    model: ctx.model,
    system_fingerprint: 'mock',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  })
}

/** Usage with both the DeepSeek (`prompt_cache_*`) and the OpenAI (`prompt_tokens_details`) fields. */
export function openaiUsage(reply: Reply): Record<string, unknown> {
  const usage: Record<string, unknown> = {
    prompt_tokens: reply.usage.input,
    completion_tokens: reply.usage.output,
    total_tokens: reply.usage.input + reply.usage.output,
    prompt_cache_hit_tokens: reply.usage.cacheRead,
    prompt_cache_miss_tokens: reply.usage.input - reply.usage.cacheRead,
    prompt_tokens_details: { cached_tokens: reply.usage.cacheRead },
  }
  if (reply.reasoning !== '') usage.completion_tokens_details = { reasoning_tokens: Math.max(1, Math.ceil(reply.reasoning.length / 4)) }
  return usage
}

function roleChunk(ctx: RenderContext): string {
  return chunk(ctx, { role: 'assistant', content: '' })
}

function tail(ctx: RenderContext, reply: Reply): string[] {
  const frames = [chunk(ctx, {}, FINISH[reply.finish])]
  if (ctx.includeUsage) {
    frames.push(sseFrame({ id: ctx.id, object: 'chat.completion.chunk', created: CREATED, model: ctx.model, system_fingerprint: 'mock', choices: [], usage: openaiUsage(reply) }))
  }
  frames.push(sseFrame('[DONE]'))
  return frames
}

export function openaiStream(reply: Reply, ctx: RenderContext): StreamPlan {
  const frames = [roleChunk(ctx)]
  for (const piece of split(reply.reasoning, reply.chunkSize)) frames.push(chunk(ctx, { content: null, reasoning_content: piece }))
  for (const piece of split(reply.text, reply.chunkSize)) frames.push(chunk(ctx, { content: piece }))
  reply.toolCalls.forEach((call, index) => {
    frames.push(chunk(ctx, { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }))
    for (const piece of split(call.arguments, reply.chunkSize)) frames.push(chunk(ctx, { tool_calls: [{ index, function: { arguments: piece } }] }))
  })
  frames.push(...tail(ctx, reply))
  return { frames, end: 'close' }
}

export function openaiJson(reply: Reply, ctx: RenderContext): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: reply.text === '' && reply.toolCalls.length > 0 ? null : reply.text }
  if (reply.reasoning !== '') message.reasoning_content = reply.reasoning
  if (reply.toolCalls.length > 0) {
    message.tool_calls = reply.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }))
  }
  return {
    id: ctx.id,
    object: 'chat.completion',
    created: CREATED,
    model: ctx.model,
    system_fingerprint: 'mock',
    choices: [{ index: 0, message, logprobs: null, finish_reason: FINISH[reply.finish] }],
    usage: openaiUsage(reply),
  }
}

export function openaiFault(kind: FaultKind, text: string, reply: Reply, ctx: RenderContext): StreamPlan {
  switch (kind) {
    case 'cut': return { frames: [roleChunk(ctx), chunk(ctx, { content: text })], end: 'destroy' }
    case 'stall': return { frames: [roleChunk(ctx), chunk(ctx, { content: text })], end: 'hang' }
    case 'malformed': return { frames: [roleChunk(ctx), 'data: {"choices": [{"delta": {"content": oops\n\n'], end: 'close' }
    case 'empty': return { frames: [roleChunk(ctx), ...tail(ctx, { ...reply, finish: 'stop' })], end: 'close' }
  }
}

export function openaiErrorBody(status: number, message: string): Record<string, unknown> {
  const type = status === 429 ? 'rate_limit_error' : status === 401 || status === 403 ? 'authentication_error'
    : status >= 500 ? 'server_error' : 'invalid_request_error'
  return { error: { message, type, param: null, code: String(status) } }
}

/** An error reported inside a 200 stream (as some OpenAI-compatible providers do). */
export function openaiStreamError(status: number, message: string, ctx: RenderContext): StreamPlan {
  return { frames: [roleChunk(ctx), sseFrame(openaiErrorBody(status, message))], end: 'close' }
}
