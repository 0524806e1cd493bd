/**
 * The OpenAI-compatible chat-completions adapter (DeepSeek is the default provider).
 * One `stream()` call is one provider attempt: POST `${baseUrl}/chat/completions`, decode the
 * SSE stream, end with exactly one `finish` chunk. Failures never throw out of the iterator.
 */
import type { GenerateRequest, LlmAdapter, ProviderEndpoint, StreamChunk } from '@dsh/protocol'
import { ChatStreamDecoder } from './decode.js'
import { encodeChatRequest } from './body.js'
import { DEFAULT_IDLE_TIMEOUT_MS, postSse, toFailure } from '@dsh/core'

export function chatCompletionsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/chat/completions`
}

async function* streamChat(req: GenerateRequest, endpoint: ProviderEndpoint): AsyncGenerator<StreamChunk, void, undefined> {
  const decoder = new ChatStreamDecoder(endpoint.id, endpoint.apiKey)
  try {
    const events = postSse({
      url: chatCompletionsUrl(endpoint.baseUrl),
      headers: { authorization: `Bearer ${endpoint.apiKey}`, ...endpoint.headers },
      body: undefined,
      bytes: encodeChatRequest(req),
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

export const openaiAdapter: LlmAdapter = {
  protocol: 'openai',
  stream: streamChat,
}
