/**
 * GenerateRequest → OpenAI chat-completions body (pure).
 *
 * Contract:
 * - `system` (when non-empty) is the first message; tools become `{type: 'function', function}`.
 * - user content is a plain string when it is text only (parts joined by "\n"), else an array
 *   of `text` / `image_url` (data URL) parts.
 * - assistant messages carry `content` (text blocks joined, `null` when only tool calls),
 *   `reasoning_content` (reasoning blocks joined; the DeepSeek convention) and `tool_calls`
 *   with the raw `arguments` text.
 * - tool results are `{role: 'tool', tool_call_id, content}`; the API takes text only, so an
 *   image in a tool result becomes the note `[image omitted: MIME]`.
 * - `reasoningEffort`: absent or 'off' sends nothing; low/medium/high are sent as
 *   `reasoning_effort`; 'max' is sent as 'high' (the highest value the API accepts).
 * - always `stream: true` with `stream_options.include_usage`; `max_tokens` and `temperature`
 *   only when configured.
 */
import type { AssistantBlock, GenerateRequest, ModelMessage, ReasoningEffort, ToolContent, UserContent } from '@dsh/protocol'

export interface ChatToolCall { id: string; type: 'function'; function: { name: string; arguments: string } }

export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } }

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; reasoning_content?: string; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string }

export interface ChatRequestBody {
  model: string
  messages: ChatMessage[]
  tools?: { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }[]
  stream: true
  stream_options: { include_usage: true }
  max_tokens?: number
  temperature?: number
  reasoning_effort?: 'low' | 'medium' | 'high'
}

function userContent(parts: UserContent[]): string | ChatContentPart[] {
  if (parts.every((p) => p.type === 'text')) return parts.map((p) => p.text).join('\n')
  return parts.map((p): ChatContentPart => p.type === 'text'
    ? { type: 'text', text: p.text }
    : { type: 'image_url', image_url: { url: `data:${p.mimeType};base64,${p.data}` } })
}

function toolContent(parts: ToolContent[]): string {
  return parts.map((p) => p.type === 'text' ? p.text : `[image omitted: ${p.mimeType}]`).join('\n')
}

function assistantMessage(blocks: AssistantBlock[]): ChatMessage {
  let text = ''
  let reasoning: string | undefined
  const calls: ChatToolCall[] = []
  for (const block of blocks) {
    if (block.type === 'text') text += block.text
    else if (block.type === 'reasoning') reasoning = (reasoning ?? '') + block.text
    else calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: block.arguments } })
  }
  const message: ChatMessage = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text }
  if (reasoning !== undefined) message.reasoning_content = reasoning
  if (calls.length > 0) message.tool_calls = calls
  return message
}

export function toChatMessage(message: ModelMessage): ChatMessage {
  switch (message.role) {
    case 'user': return { role: 'user', content: userContent(message.content) }
    case 'assistant': return assistantMessage(message.content)
    case 'tool': return { role: 'tool', tool_call_id: message.callId, content: toolContent(message.content) }
  }
}

function effort(value: ReasoningEffort | undefined): 'low' | 'medium' | 'high' | undefined {
  if (value === undefined || value === 'off') return undefined
  return value === 'max' ? 'high' : value
}

export function buildChatRequest(req: GenerateRequest): ChatRequestBody {
  const messages: ChatMessage[] = []
  if (req.system !== '') messages.push({ role: 'system', content: req.system })
  for (const message of req.messages) messages.push(toChatMessage(message))
  const body: ChatRequestBody = {
    model: req.config.model,
    messages,
    stream: true,
    stream_options: { include_usage: true },
  }
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }))
  }
  if (req.config.maxTokens !== undefined) body.max_tokens = req.config.maxTokens
  if (req.config.temperature !== undefined) body.temperature = req.config.temperature
  const reasoningEffort = effort(req.config.reasoningEffort)
  if (reasoningEffort !== undefined) body.reasoning_effort = reasoningEffort
  return body
}
