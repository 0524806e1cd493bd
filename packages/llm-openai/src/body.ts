/**
 * The request body as JSON text, built incrementally (pure apart from caches).
 *
 * Contract: `serializeChatRequest(req) === JSON.stringify(buildChatRequest(req))`, byte for
 * byte, for every request, and `Buffer.concat(encodeChatRequest(req))` is its UTF-8 encoding.
 * The history is the part that grows with a session, so only frozen messages are cached (the
 * session deriver freezes the ones it hands out; a frozen message's content is frozen too),
 * by the message object's identity, so a cached text can never go stale. Everything else
 * (system prompt, tools, config) is serialised on each call.
 */
import { FrozenJsonCache, JsonArenas, type ArenaUnit } from '@dsh/core'
import type { GenerateRequest, ModelMessage } from '@dsh/protocol'
import { buildChatRequest, toChatMessage, type ChatRequestBody } from './request.js'

const messageJson = new FrozenJsonCache<ModelMessage>()

function jsonOf(message: ModelMessage): string {
  return messageJson.text(message, toChatMessage)
}

interface Parts {
  /** `{"model":…,"messages":[` and the messages before the history (the system prompt). */
  head: string
  /** Whether `head` already holds a message (the next one needs a comma). */
  comma: boolean
  /** `],` and the keys after `messages`, through the closing brace. */
  tail: string
}

/** The body without its history; undefined when the model is not a string (JSON.stringify would drop it). */
function parts(req: GenerateRequest): Parts | undefined {
  // `messages` is the body's second key (see buildChatRequest)
  const { model, messages: skeleton, ...rest } = buildChatRequest({ ...req, messages: [] }) as ChatRequestBody
  if (typeof model !== 'string') return undefined
  return {
    head: `{"model":${JSON.stringify(model)},"messages":[${skeleton.map((m) => JSON.stringify(m)).join(',')}`,
    comma: skeleton.length > 0,
    tail: `],${JSON.stringify(rest).slice(1)}`,
  }
}

export function serializeChatRequest(req: GenerateRequest): string {
  const p = parts(req)
  if (!p) return JSON.stringify(buildChatRequest(req))
  let text = p.head
  let comma = p.comma
  for (const message of req.messages) {
    text += (comma ? ',' : '') + jsonOf(message)
    comma = true
  }
  return text + p.tail
}

const arenas = new JsonArenas<ModelMessage>()

/**
 * The request body as UTF-8 byte chunks, sent in order. The frozen history prefix is
 * encoded once per message into core's per-conversation arena (one unit per message), so a
 * step allocates only its new messages and the tail, never a copy of the whole history
 * (decisions 0088, 0097).
 */
export function encodeChatRequest(req: GenerateRequest): Uint8Array[] {
  const p = parts(req)
  if (!p) return [Buffer.from(serializeChatRequest(req), 'utf8')]
  const messages = req.messages
  let frozen = 0
  while (frozen < messages.length && Object.isFrozen(messages[frozen])) frozen++
  const prefix = arenas.prefix(p.head, p.comma, messages, frozen, (from) => {
    // an array, not a generator (0097)
    const out: ArenaUnit[] = []
    for (let i = from; i < frozen; i++) out.push({ text: JSON.stringify(toChatMessage(messages[i]!)), span: 1, guard: 0 })
    return out
  })
  let rest = ''
  let comma = prefix.hasElements
  for (let i = prefix.covered; i < messages.length; i++) {
    rest += (comma ? ',' : '') + JSON.stringify(toChatMessage(messages[i]!))
    comma = true
  }
  return [prefix.bytes, Buffer.from(rest + p.tail, 'utf8')]
}
