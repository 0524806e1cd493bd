/**
 * GenerateRequest → Anthropic Messages body (pure).
 *
 * Contract:
 * - `system` is top-level (omitted when empty); tools carry `input_schema`.
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

export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: (AnthropicTextBlock | AnthropicImageBlock)[]; is_error?: true }

export interface AnthropicMessage { role: 'user' | 'assistant'; content: AnthropicContentBlock[] }

export interface MessagesRequestBody {
  model: string
  max_tokens: number
  system?: string
  messages: AnthropicMessage[]
  tools?: { name: string; description: string; input_schema: Record<string, unknown> }[]
  stream: true
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

export function toAnthropicMessages(messages: ModelMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = []
  let toolTurn: AnthropicMessage | undefined
  for (const message of messages) {
    if (message.role === 'tool') {
      const result: AnthropicContentBlock = { type: 'tool_result', tool_use_id: message.callId, content: message.content.map(part) }
      if (message.isError) result.is_error = true
      if (toolTurn) toolTurn.content.push(result)
      else {
        toolTurn = { role: 'user', content: [result] }
        out.push(toolTurn)
      }
      continue
    }
    toolTurn = undefined
    if (message.role === 'user') {
      out.push({ role: 'user', content: message.content.map(part) })
      continue
    }
    const content = message.content.map(assistantBlock).filter((b): b is AnthropicContentBlock => b !== undefined)
    if (content.length > 0) out.push({ role: 'assistant', content })
  }
  return out
}

/** The thinking budget for an effort under a max_tokens cap, or undefined for thinking off. */
export function thinkingBudget(effort: ReasoningEffort | undefined, maxTokens: number | undefined): number | undefined {
  if (effort === undefined || effort === 'off') return undefined
  const budget = maxTokens === undefined ? THINKING_BUDGET[effort] : Math.min(THINKING_BUDGET[effort], maxTokens - 1)
  return budget < MIN_THINKING_BUDGET ? undefined : budget
}

export function buildMessagesRequest(req: GenerateRequest): MessagesRequestBody {
  const budget = thinkingBudget(req.config.reasoningEffort, req.config.maxTokens)
  const body: MessagesRequestBody = {
    model: req.config.model,
    max_tokens: req.config.maxTokens ?? DEFAULT_MAX_TOKENS + (budget ?? 0),
    messages: toAnthropicMessages(req.messages),
    stream: true,
  }
  if (req.system !== '') body.system = req.system
  if (req.tools.length > 0) body.tools = req.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }))
  if (budget !== undefined) body.thinking = { type: 'enabled', budget_tokens: budget }
  else if (req.config.temperature !== undefined) body.temperature = req.config.temperature
  return body
}
