/**
 * The request body as JSON text, built incrementally (pure apart from a cache).
 *
 * Contract: `serializeChatRequest(req) === JSON.stringify(buildChatRequest(req))`, byte for
 * byte, for every request. The history is the part that grows with a session, so the JSON
 * text of each history message is cached by the message object's identity — only for
 * frozen messages (the session deriver freezes the ones it hands out; a frozen message's
 * content is frozen too), so a cached text can never go stale. Everything else (system
 * prompt, tools, config) is serialised on each call.
 */
import type { GenerateRequest, ModelMessage } from '@dsh/protocol'
import { buildChatRequest, toChatMessage, type ChatRequestBody } from './request.js'

const messageJson = new WeakMap<ModelMessage, string>()

function jsonOf(message: ModelMessage): string {
  if (!Object.isFrozen(message)) return JSON.stringify(toChatMessage(message))
  let text = messageJson.get(message)
  if (text === undefined) {
    text = JSON.stringify(toChatMessage(message))
    messageJson.set(message, text)
  }
  return text
}

export function serializeChatRequest(req: GenerateRequest): string {
  // the body without its history; `messages` is its second key (see buildChatRequest)
  const { model, messages: skeleton, ...rest } = buildChatRequest({ ...req, messages: [] }) as ChatRequestBody
  if (typeof model !== 'string') return JSON.stringify(buildChatRequest(req))
  const parts = skeleton.map((m) => JSON.stringify(m))
  for (const message of req.messages) parts.push(jsonOf(message))
  return `{"model":${JSON.stringify(model)},"messages":[${parts.join(',')}],${JSON.stringify(rest).slice(1)}`
}
