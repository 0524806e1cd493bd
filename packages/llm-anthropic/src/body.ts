/**
 * The Messages request body as JSON text, joined from cached pieces (pure apart from a cache).
 *
 * Contract: `serializeMessagesRequest(req) === JSON.stringify(buildMessagesRequest(req))`,
 * byte for byte, for every request (decision 0090). The body's messages do not map 1:1 onto
 * history messages (consecutive tool results share one user message; an assistant message
 * with nothing to send is dropped), so the cache holds, per frozen history message, the JSON
 * of what it contributes without a breakpoint: a user or assistant message ('' when dropped),
 * or one `tool_result` block. The messages that carry a cache breakpoint (the last two user
 * messages) move every step and are always built fresh, so no cached text ever carries a
 * breakpoint or misses one.
 *
 * `encodeMessagesRequest(req)`: byte chunks whose concatenation is the UTF-8 of the same
 * text (decision 0097). Every body message before the first marked one is final while the
 * history only grows (breakpoints only move later), so it is encoded once into core's
 * per-conversation arena (`JsonArenas`), one unit per body message; a step encodes only the
 * body messages from the first marked one on (in a tool loop: two tool-result turns and the
 * assistant turn between them) and the tail.
 */
import type { GenerateRequest, ModelMessage } from '@dsh/protocol'
import { FrozenJsonCache, JsonArenas, joinJsonObject, type ArenaUnit } from '@dsh/core'
import {
  assistantMessage, BREAKPOINT_MESSAGES, breakpointIndices, requestSkeleton, toAnthropicMessages, toolResultBlock, userMessage, withBreakpoint,
  type AnthropicMessage,
} from './request.js'

const pieceJson = new FrozenJsonCache<ModelMessage>()

function piece(message: ModelMessage): unknown {
  switch (message.role) {
    case 'user': return userMessage(message)
    case 'assistant': return assistantMessage(message)
    case 'tool': return toolResultBlock(message)
  }
}

/** One body message: the history messages it is made of (a run of tool results, or one). */
interface Group { role: AnthropicMessage['role']; members: ModelMessage[]; json: string[] }

function groups(messages: readonly ModelMessage[]): Group[] {
  const out: Group[] = []
  let toolRun: Group | undefined
  for (const message of messages) {
    const json = pieceJson.text(message, piece)
    if (message.role === 'tool') {
      if (toolRun) {
        toolRun.members.push(message)
        toolRun.json.push(json)
      } else {
        toolRun = { role: 'user', members: [message], json: [json] }
        out.push(toolRun)
      }
      continue
    }
    toolRun = undefined
    if (json !== '') out.push({ role: message.role, members: [message], json: [json] })
  }
  return out
}

function groupJson(group: Group, breakpoint: boolean): string {
  if (breakpoint) {
    const [message] = toAnthropicMessages(group.members)
    return message === undefined ? '' : JSON.stringify(withBreakpoint(message))
  }
  const first = group.members[0]
  return first?.role === 'tool' ? `{"role":"user","content":[${group.json.join(',')}]}` : group.json[0] ?? ''
}

export function serializeMessagesRequest(req: GenerateRequest): string {
  const { head, tail } = requestSkeleton(req)
  const body = groups(req.messages)
  const marked = new Set(breakpointIndices(body.map((g) => g.role)))
  return joinJsonObject(head, 'messages', body.map((g, i) => groupJson(g, marked.has(i))), tail)
}

const arenas = new JsonArenas<ModelMessage>()

/**
 * The history index where the first message carrying a breakpoint starts: the start of the
 * second-to-last user message of the body (a run of tool results is one), found from the end.
 * `messages.length` when the body has no user message.
 */
function firstMarked(messages: readonly ModelMessage[]): number {
  let users = 0
  let start = messages.length
  for (let i = messages.length - 1; i >= 0 && users < BREAKPOINT_MESSAGES; i--) {
    const role = messages[i]!.role
    if (role === 'user' || (role === 'tool' && messages[i - 1]?.role !== 'tool')) {
      users++
      start = i
    }
  }
  return start
}

/**
 * Breakpoint-free body messages from `from`, each ending before `limit`; a tool run only once
 * a frozen message closes it. An array, not a generator: with a generator per request the
 * OpenAI 1,000-step peak RSS measured ~2 MB higher (0097).
 */
function stableUnits(messages: readonly ModelMessage[], from: number, limit: number, frozen: number): ArenaUnit[] {
  const out: ArenaUnit[] = []
  let i = from
  while (i < limit) {
    const message = messages[i]!
    if (message.role !== 'tool') {
      const json = message.role === 'user' ? userMessage(message) : assistantMessage(message)
      out.push({ text: json === undefined ? '' : JSON.stringify(json), span: 1, guard: 0 })
      i++
      continue
    }
    let end = i
    while (end < messages.length && messages[end]!.role === 'tool') end++
    if (end > limit || end >= frozen) break
    const results = messages.slice(i, end).map((m) => toolResultBlock(m as ModelMessage & { role: 'tool' }))
    out.push({ text: JSON.stringify({ role: 'user', content: results }), span: end - i, guard: 1 })
    i = end
  }
  return out
}

export function encodeMessagesRequest(req: GenerateRequest): Uint8Array[] {
  const { head, tail } = requestSkeleton(req)
  const headMembers = JSON.stringify(head).slice(1, -1)
  const tailMembers = JSON.stringify(tail).slice(1, -1)
  const messages = req.messages
  let frozen = 0
  while (frozen < messages.length && Object.isFrozen(messages[frozen])) frozen++
  const limit = Math.min(frozen, firstMarked(messages))
  const prefix = arenas.prefix(`{${headMembers}${headMembers === '' ? '' : ','}"messages":[`, false, messages, limit,
    (from) => stableUnits(messages, from, limit, frozen))
  const rest = toAnthropicMessages(messages.slice(prefix.covered))
  for (const i of breakpointIndices(rest.map((m) => m.role))) rest[i] = withBreakpoint(rest[i]!)
  let text = ''
  let comma = prefix.hasElements
  for (const message of rest) {
    text += (comma ? ',' : '') + JSON.stringify(message)
    comma = true
  }
  return [prefix.bytes, Buffer.from(`${text}]${tailMembers === '' ? '' : ','}${tailMembers}}`, 'utf8')]
}
