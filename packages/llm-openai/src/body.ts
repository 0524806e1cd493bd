/**
 * The request body as JSON text, built incrementally (pure apart from a cache).
 *
 * Contract: `serializeChatRequest(req) === JSON.stringify(buildChatRequest(req))`, byte for
 * byte, for every request. The history is the part that grows with a session, so the JSON
 * text of each frozen history message is cached by the message object (`FrozenJsonCache`,
 * decision 0066). Everything else (system prompt, tools, config) is serialised on each call.
 */
import type { GenerateRequest, ModelMessage } from '@dsh/protocol'
import { FrozenJsonCache, joinJsonObject } from '@dsh/core'
import { buildChatRequest, toChatMessage } from './request.js'

const messageJson = new FrozenJsonCache<ModelMessage>()

export function serializeChatRequest(req: GenerateRequest): string {
  // the body without its history; `messages` is its second key (see buildChatRequest)
  const { model, messages: skeleton, ...rest } = buildChatRequest({ ...req, messages: [] })
  const parts = skeleton.map((m) => JSON.stringify(m))
  for (const message of req.messages) parts.push(messageJson.text(message, toChatMessage))
  return joinJsonObject({ model }, 'messages', parts, rest)
}
