/**
 * GenerateRequest → Anthropic Messages body (pure).
 *
 * Contract:
 * - key order: model, max_tokens, messages, stream, then system, tools, thinking|temperature.
 * - `system` is top-level, one text block (omitted when empty); tools carry `input_schema`.
 * - prompt-cache breakpoints (`cache_control: {type: 'ephemeral'}`): on the system block
 *   (which caches tools + system), or on the last tool when there is no system prompt; and on
 *   the last block of each of the last two user messages (see `breakpointIndices`).
 * - user content → `text` / base64 `image` blocks.
 * - assistant content → `thinking` (text + `signature`) or `redacted_thinking` (data); a
 *   reasoning block with neither signature nor redacted payload (e.g. from another provider)
 *   is dropped, as the API rejects unsigned thinking. Empty text blocks are dropped; an
 *   assistant message left empty is dropped. Tool calls → `tool_use` with `input` parsed from
 *   the raw arguments (`{}` when they are not a JSON object).
 * - tool results → user `tool_result` blocks (`is_error` only when true); consecutive tool
 *   messages merge into one user message.
 * - `max_tokens` is required: `config.maxTokens`, else 8192 (+ the thinking budget when
 *   thinking is on).
 * - `reasoningEffort` other than 'off' enables thinking with `budget_tokens` low 2048,
 *   medium 8192, high 16384, max 32768, capped at max_tokens - 1; a cap under the API minimum
 *   (1024) leaves thinking off. With thinking on, `temperature` is not sent (the API requires
 *   the default).
 */
import type { AssistantBlock, GenerateRequest, ModelMessage, ReasoningEffort, ToolContent, UserContent } from '@dsh/protocol'

export const DEFAULT_MAX_TOKENS = 8192
const MIN_THINKING_BUDGET = 1024
const THINKING_BUDGET: Record<Exclude<ReasoningEffort, 'off'>, number> = { low: 2048, medium: 8192, high: 16384, max: 32768 }

export type AnthropicTextBlock = { type: 'text'; text: string }
export type AnthropicImageBlock = { type: 'image'; source: { type: 'base64'; media_type: string; data: string } }

/** A prompt-cache breakpoint: the prefix up to and including this block is cached. */
export interface CacheControl { type: 'ephemeral' }
const EPHEMERAL: CacheControl = Object.freeze({ type: 'ephemeral' })
export const BREAKPOINT_MESSAGES = 2

export type AnthropicToolResultBlock = { type: 'tool_result'; tool_use_id: string; content: (AnthropicTextBlock | AnthropicImageBlock)[]; is_error?: true }

export type AnthropicContentBlock = (
  | AnthropicTextBlock
  | AnthropicImageBlock
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | AnthropicToolResultBlock
) & { cache_control?: CacheControl }

export interface AnthropicMessage { role: 'user' | 'assistant'; content: AnthropicContentBlock[] }

export interface MessagesRequestBody {
  model: string
  max_tokens: number
  messages: AnthropicMessage[]
  stream: true
  system?: [AnthropicTextBlock & { cache_control: CacheControl }]
  tools?: { name: string; description: string; input_schema: Record<string, unknown>; cache_control?: CacheControl }[]
  temperature?: number
  thinking?: { type: 'enabled'; budget_tokens: number }
}

function part(p: UserContent | ToolContent): AnthropicTextBlock | AnthropicImageBlock {
  return p.type === 'text' ? { type: 'text', text: p.text } : { type: 'image', source: { type: 'base64', media_type: p.mimeType, data: p.data } }
}

function toolInput(raw: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw)
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>
  } catch {
    // raw arguments that are not JSON: the tool already answered with an error; send {}
  }
  return {}
}

function assistantBlock(block: AssistantBlock): AnthropicContentBlock | undefined {
  switch (block.type) {
    case 'text': return block.text === '' ? undefined : { type: 'text', text: block.text }
    case 'tool-call': return { type: 'tool_use', id: block.id, name: block.name, input: toolInput(block.arguments) }
    case 'reasoning':
      if (block.redacted !== undefined) return { type: 'redacted_thinking', data: block.redacted }
      if (block.signature !== undefined) return { type: 'thinking', thinking: block.text, signature: block.signature }
      return undefined
  }
}

/** One user message (not merged with anything). */
export function userMessage(message: ModelMessage & { role: 'user' }): AnthropicMessage {
  return { role: 'user', content: message.content.map(part) }
}

/** One assistant message, or undefined when no block survives (the message is dropped). */
export function assistantMessage(message: ModelMessage & { role: 'assistant' }): AnthropicMessage | undefined {
  const content = message.content.map(assistantBlock).filter((b): b is AnthropicContentBlock => b !== undefined)
  return content.length > 0 ? { role: 'assistant', content } : undefined
}

/** One tool result as a `tool_result` block (consecutive ones share a user message). */
export function toolResultBlock(message: ModelMessage & { role: 'tool' }): AnthropicToolResultBlock {
  const result: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: message.callId, content: message.content.map(part) }
  if (message.isError) result.is_error = true
  return result
}

export function toAnthropicMessages(messages: readonly ModelMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = []
  let toolTurn: AnthropicMessage | undefined
  for (const message of messages) {
    if (message.role === 'tool') {
      const result = toolResultBlock(message)
      if (toolTurn) toolTurn.content.push(result)
      else {
        toolTurn = { role: 'user', content: [result] }
        out.push(toolTurn)
      }
      continue
    }
    toolTurn = undefined
    const translated = message.role === 'user' ? userMessage(message) : assistantMessage(message)
    if (translated) out.push(translated)
  }
  return out
}

/**
 * Indices of the messages that carry a cache breakpoint: the last BREAKPOINT_MESSAGES user
 * messages (this request's end, and the end of the previous request of a tool loop, so
 * the prefix written last step is read back exactly). `roles` is the body's roles in order.
 */
export function breakpointIndices(roles: readonly AnthropicMessage['role'][]): number[] {
  const out: number[] = []
  for (let i = roles.length - 1; i >= 0 && out.length < BREAKPOINT_MESSAGES; i--) if (roles[i] === 'user') out.unshift(i)
  return out
}

/** A copy of a user message whose last block carries the cache breakpoint. */
export function withBreakpoint(message: AnthropicMessage): AnthropicMessage {
  const last = message.content[message.content.length - 1]
  if (last === undefined || last.type === 'thinking' || last.type === 'redacted_thinking') return message
  return { role: message.role, content: [...message.content.slice(0, -1), { ...last, cache_control: EPHEMERAL }] }
}

/** The request without its messages: everything but the history, in body key order. */
export function requestSkeleton(req: GenerateRequest): { head: Pick<MessagesRequestBody, 'model' | 'max_tokens'>; tail: Omit<MessagesRequestBody, 'model' | 'max_tokens' | 'messages'> } {
  const budget = thinkingBudget(req.config.reasoningEffort, req.config.maxTokens)
  const head = { model: req.config.model, max_tokens: req.config.maxTokens ?? DEFAULT_MAX_TOKENS + (budget ?? 0) }
  const tail: Omit<MessagesRequestBody, 'model' | 'max_tokens' | 'messages'> = { stream: true }
  if (req.system !== '') tail.system = [{ type: 'text', text: req.system, cache_control: EPHEMERAL }]
  if (req.tools.length > 0) {
    tail.tools = req.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }))
    const last = tail.tools[tail.tools.length - 1]
    if (req.system === '' && last) last.cache_control = EPHEMERAL
  }
  if (budget !== undefined) tail.thinking = { type: 'enabled', budget_tokens: budget }
  else if (req.config.temperature !== undefined) tail.temperature = req.config.temperature
  return { head, tail }
}

/** The thinking budget for an effort under a max_tokens cap, or undefined for thinking off. */
export function thinkingBudget(effort: ReasoningEffort | undefined, maxTokens: number | undefined): number | undefined {
  if (effort === undefined || effort === 'off') return undefined
  const budget = maxTokens === undefined ? THINKING_BUDGET[effort] : Math.min(THINKING_BUDGET[effort], maxTokens - 1)
  return budget < MIN_THINKING_BUDGET ? undefined : budget
}

export function buildMessagesRequest(req: GenerateRequest): MessagesRequestBody {
  const { head, tail } = requestSkeleton(req)
  const messages = toAnthropicMessages(req.messages)
  for (const i of breakpointIndices(messages.map((m) => m.role))) messages[i] = withBreakpoint(messages[i]!)
  return { ...head, messages, ...tail }
}
