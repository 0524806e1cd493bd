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
import { FrozenJsonCache } from '@dsh/core'
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

/**
 * The encoded head and frozen history prefix of one conversation, appended to in place.
 * Invariant: bytes below `length` are never written again (a body handed to the socket may
 * still be in flight); growing or diverging copies into a new buffer.
 */
interface Arena {
  head: string
  comma: boolean
  buf: Buffer
  length: number
  messages: ModelMessage[]
  /** `ends[i]`: the byte length after `messages[i]`. */
  ends: number[]
}

/** Keyed by the conversation's first history message: one arena per session history. */
const arenas = new WeakMap<ModelMessage, Arena>()

function newArena(p: Parts, from?: { arena: Arena; keep: number }): Arena {
  const keepBytes = from ? (from.keep === 0 ? Buffer.byteLength(p.head) : from.arena.ends[from.keep - 1]!) : Buffer.byteLength(p.head)
  const buf = Buffer.allocUnsafeSlow(Math.max(16_384, keepBytes * 2))
  if (from) from.arena.buf.copy(buf, 0, 0, keepBytes)
  else buf.write(p.head, 0, 'utf8')
  return {
    head: p.head, comma: p.comma, buf, length: keepBytes,
    messages: from ? from.arena.messages.slice(0, from.keep) : [],
    ends: from ? from.arena.ends.slice(0, from.keep) : [],
  }
}

function append(arena: Arena, text: string): void {
  const need = arena.length + Buffer.byteLength(text)
  if (need > arena.buf.length) {
    const bigger = Buffer.allocUnsafeSlow(Math.max(need, arena.buf.length * 2))
    arena.buf.copy(bigger, 0, 0, arena.length)
    arena.buf = bigger
  }
  arena.length += arena.buf.write(text, arena.length, 'utf8')
}

/**
 * The request body as UTF-8 byte chunks, sent in order. The frozen history prefix is
 * encoded once per message into a per-conversation arena, so a step allocates only its new
 * messages and the tail, never a copy of the whole history (0088).
 */
export function encodeChatRequest(req: GenerateRequest): Uint8Array[] {
  const p = parts(req)
  const first = req.messages[0]
  if (!p || first === undefined || !Object.isFrozen(first)) return [Buffer.from(serializeChatRequest(req), 'utf8')]
  let frozen = 0
  while (frozen < req.messages.length && Object.isFrozen(req.messages[frozen])) frozen++
  let arena = arenas.get(first)
  if (!arena || arena.head !== p.head || arena.comma !== p.comma) {
    arena = newArena(p)
  } else {
    let same = 0
    const known = Math.min(arena.messages.length, frozen)
    while (same < known && arena.messages[same] === req.messages[same]) same++
    if (same < arena.messages.length) arena = newArena(p, { arena, keep: same })
  }
  arenas.set(first, arena)
  for (let i = arena.messages.length; i < frozen; i++) {
    const message = req.messages[i]!
    append(arena, (arena.comma || i > 0 ? ',' : '') + JSON.stringify(toChatMessage(message)))
    arena.messages.push(message)
    arena.ends.push(arena.length)
  }
  let rest = ''
  for (let i = frozen; i < req.messages.length; i++) rest += ',' + JSON.stringify(toChatMessage(req.messages[i]!))
  return [arena.buf.subarray(0, arena.length), Buffer.from(rest + p.tail, 'utf8')]
}
