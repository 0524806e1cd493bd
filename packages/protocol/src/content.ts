/** Content vocabulary shared by the session log, the model history and tools. */

export interface TextPart { type: 'text'; text: string }
/** An image, base64-encoded. */
export interface ImagePart { type: 'image'; mimeType: string; data: string }

export type UserContent = TextPart | ImagePart
export type ToolContent = TextPart | ImagePart

export interface ReasoningBlock {
  type: 'reasoning'
  text: string
  /** Provider-issued signature that must be echoed back verbatim (Anthropic thinking). */
  signature?: string
  /** Encrypted reasoning the provider returned instead of text (Anthropic redacted_thinking). */
  redacted?: string
}
/** A tool call as the model produced it; `arguments` stays the raw JSON text. */
export interface ToolCallBlock { type: 'tool-call'; id: string; name: string; arguments: string }
export type AssistantBlock = TextPart | ReasoningBlock | ToolCallBlock

/** Provider-neutral model history, derived from the session log. */
export type ModelMessage =
  | { role: 'user'; content: UserContent[] }
  | { role: 'assistant'; content: AssistantBlock[] }
  | { role: 'tool'; callId: string; name: string; content: ToolContent[]; isError: boolean }

export function textOf(parts: readonly { type: string; text?: string }[]): string {
  let out = ''
  for (const part of parts) if (part.type === 'text' && part.text) out += part.text
  return out
}
