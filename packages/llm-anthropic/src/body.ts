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
 */
import type { GenerateRequest, ModelMessage } from '@dsh/protocol'
import { FrozenJsonCache, joinJsonObject } from '@dsh/core'
import {
  assistantMessage, breakpointIndices, requestSkeleton, toAnthropicMessages, toolResultBlock, userMessage, withBreakpoint,
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
