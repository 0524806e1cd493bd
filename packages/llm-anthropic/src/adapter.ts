/**
 * The Anthropic Messages adapter. One `stream()` call is one provider attempt: POST
 * `${baseUrl}/v1/messages` (`x-api-key`, `anthropic-version: 2023-06-01`), decode the SSE
 * stream, end with exactly one `finish` chunk. Failures never throw out of the iterator.
 */
import type { GenerateRequest, LlmAdapter, ProviderEndpoint, StreamChunk } from '@dsh/protocol'
import { MessagesStreamDecoder } from './decode.js'
import { encodeMessagesRequest } from './body.js'
import { DEFAULT_IDLE_TIMEOUT_MS, postSse, toFailure } from '@dsh/core'

export const ANTHROPIC_VERSION = '2023-06-01'

export function messagesUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/v1/messages`
}

async function* streamMessages(req: GenerateRequest, endpoint: ProviderEndpoint): AsyncGenerator<StreamChunk, void, undefined> {
  const decoder = new MessagesStreamDecoder(endpoint.id, endpoint.apiKey)
  try {
    const events = postSse({
      url: messagesUrl(endpoint.baseUrl),
      headers: { 'x-api-key': endpoint.apiKey, 'anthropic-version': ANTHROPIC_VERSION, ...endpoint.headers },
      body: undefined,
      bytes: encodeMessagesRequest(req),
      signal: req.signal,
      idleTimeoutMs: endpoint.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      provider: endpoint.id,
      apiKey: endpoint.apiKey,
    })
    for await (const event of events) {
      yield* decoder.push(event.data)
      if (decoder.done) break
    }
  } catch (error) {
    yield* decoder.fail(toFailure(error, endpoint.id, endpoint.apiKey))
    return
  }
  yield* decoder.end()
}

export const anthropicAdapter: LlmAdapter = {
  protocol: 'anthropic',
  stream: streamMessages,
}
