/**
 * OpenAI Responses API wire format for the mock (pure). Streams use the real event names,
 * each frame `event: <type>` + `data: {type, sequence_number, …}`: response.created and
 * response.in_progress, then per output item response.output_item.added … done (reasoning
 * with reasoning_summary_text deltas; message with content_part + output_text deltas;
 * function_call with function_call_arguments deltas, `id` fc_<call id>, `call_id` the
 * scripted id), then response.completed (response.incomplete for max-tokens) carrying the
 * whole output and usage. Failures inside a stream are response.failed.
 */
import type { FaultKind } from './script.js'
import { split, sseFrame, type RenderContext, type Reply, type StreamPlan } from './reply.js'
import { openaiErrorBody } from './openai.js'

const CREATED_AT = 1_700_000_000

type Obj = Record<string, unknown>

/** Numbers the frames of one stream (`sequence_number`, from 0). */
class Frames {
  readonly list: string[] = []
  add(type: string, data: Obj): void {
    this.list.push(sseFrame({ type, sequence_number: this.list.length, ...data }, type))
  }
}

export function responsesUsage(reply: Reply): Obj {
  return {
    input_tokens: reply.usage.input,
    input_tokens_details: { cached_tokens: reply.usage.cacheRead },
    output_tokens: reply.usage.output,
    output_tokens_details: { reasoning_tokens: reply.reasoning === '' ? 0 : Math.max(1, Math.ceil(reply.reasoning.length / 4)) },
    total_tokens: reply.usage.input + reply.usage.output,
  }
}

function response(ctx: RenderContext, status: string, output: Obj[], extra: Obj = {}): Obj {
  return { id: ctx.id, object: 'response', created_at: CREATED_AT, status, model: ctx.model, output, ...extra }
}

/** The finished output items, in stream order: reasoning, message, function calls. */
export function outputItems(reply: Reply, ctx: RenderContext): Obj[] {
  const items: Obj[] = []
  if (reply.reasoning !== '') items.push({ type: 'reasoning', id: `rs_${ctx.id}`, summary: [{ type: 'summary_text', text: reply.reasoning }] })
  if (reply.text !== '') {
    items.push({
      type: 'message', id: `msg_${ctx.id}`, status: 'completed', role: 'assistant',
      content: [{ type: 'output_text', text: reply.text, annotations: [] }],
    })
  }
  for (const call of reply.toolCalls) {
    items.push({ type: 'function_call', id: `fc_${call.id}`, call_id: call.id, name: call.name, arguments: call.arguments, status: 'completed' })
  }
  return items
}

function finalEvent(reply: Reply, ctx: RenderContext, output: Obj[]): [string, Obj] {
  const usage = responsesUsage(reply)
  if (reply.finish === 'max-tokens') {
    return ['response.incomplete', { response: response(ctx, 'incomplete', output, { incomplete_details: { reason: 'max_output_tokens' }, usage }) }]
  }
  return ['response.completed', { response: response(ctx, 'completed', output, { usage }) }]
}

function opening(f: Frames, ctx: RenderContext): void {
  f.add('response.created', { response: response(ctx, 'in_progress', []) })
  f.add('response.in_progress', { response: response(ctx, 'in_progress', []) })
}

function streamItem(f: Frames, item: Obj, index: number, chunkSize: number): void {
  const base = { output_index: index }
  const itemId = item.id as string
  if (item.type === 'reasoning') {
    const text = (item.summary as { text: string }[])[0]!.text
    f.add('response.output_item.added', { ...base, item: { ...item, summary: [] } })
    const part = { item_id: itemId, ...base, summary_index: 0 }
    f.add('response.reasoning_summary_part.added', { ...part, part: { type: 'summary_text', text: '' } })
    for (const delta of split(text, chunkSize)) f.add('response.reasoning_summary_text.delta', { ...part, delta })
    f.add('response.reasoning_summary_text.done', { ...part, text })
    f.add('response.reasoning_summary_part.done', { ...part, part: { type: 'summary_text', text } })
  } else if (item.type === 'message') {
    const text = (item.content as { text: string }[])[0]!.text
    f.add('response.output_item.added', { ...base, item: { ...item, status: 'in_progress', content: [] } })
    const part = { item_id: itemId, ...base, content_index: 0 }
    f.add('response.content_part.added', { ...part, part: { type: 'output_text', text: '', annotations: [] } })
    for (const delta of split(text, chunkSize)) f.add('response.output_text.delta', { ...part, delta })
    f.add('response.output_text.done', { ...part, text })
    f.add('response.content_part.done', { ...part, part: { type: 'output_text', text, annotations: [] } })
  } else {
    const args = item.arguments as string
    f.add('response.output_item.added', { ...base, item: { ...item, arguments: '', status: 'in_progress' } })
    for (const delta of split(args, chunkSize)) f.add('response.function_call_arguments.delta', { item_id: itemId, ...base, delta })
    f.add('response.function_call_arguments.done', { item_id: itemId, ...base, arguments: args })
  }
  f.add('response.output_item.done', { ...base, item })
}

export function responsesStream(reply: Reply, ctx: RenderContext): StreamPlan {
  const f = new Frames()
  opening(f, ctx)
  const output = outputItems(reply, ctx)
  output.forEach((item, i) => streamItem(f, item, i, reply.chunkSize))
  const [type, data] = finalEvent(reply, ctx, output)
  f.add(type, data)
  return { frames: f.list, end: 'close' }
}

export function responsesJson(reply: Reply, ctx: RenderContext): Obj {
  const output = outputItems(reply, ctx)
  return finalEvent(reply, ctx, output)[1].response as Obj
}

export function responsesFault(kind: FaultKind, text: string, reply: Reply, ctx: RenderContext): StreamPlan {
  const f = new Frames()
  opening(f, ctx)
  if (kind === 'malformed') {
    f.list.push('event: response.output_item.added\ndata: {"type": "response.output_item.added", oops\n\n')
    return { frames: f.list, end: 'close' }
  }
  if (kind === 'empty') {
    f.add('response.completed', { response: response(ctx, 'completed', [], { usage: responsesUsage(reply) }) })
    return { frames: f.list, end: 'close' }
  }
  const item = { type: 'message', id: `msg_${ctx.id}`, status: 'in_progress', role: 'assistant', content: [] }
  f.add('response.output_item.added', { output_index: 0, item })
  f.add('response.content_part.added', { item_id: item.id, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } })
  f.add('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: text })
  return { frames: f.list, end: kind === 'cut' ? 'destroy' : 'hang' }
}

/** HTTP error bodies are the OpenAI ones (`{error: {message, type, param, code}}`). */
export const responsesErrorBody = openaiErrorBody

/** A 200 stream that fails after response.created: response.failed with `{code, message}`. */
export function responsesStreamError(status: number, message: string, ctx: RenderContext): StreamPlan {
  const f = new Frames()
  f.add('response.created', { response: response(ctx, 'in_progress', []) })
  const code = status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error'
  f.add('response.failed', { response: response(ctx, 'failed', [], { error: { code, message } }) })
  return { frames: f.list, end: 'close' }
}
