import type { ToolContent } from '@dsh/protocol'
import type { ContentBlock } from '@modelcontextprotocol/sdk/types.js'

/** The canonical value of an MCP tool call: what the model reads, and whether it is an error. */
export interface McpCallValue {
  content: ToolContent[]
  isError: boolean
}

const text = (t: string): ToolContent => ({ type: 'text', text: t })

/** Bytes held by a base64 string (for the notes that replace binary payloads). */
function base64Bytes(data: string): number {
  const pad = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0
  return Math.max(0, Math.floor((data.length * 3) / 4) - pad)
}

/**
 * One MCP content block as tool content: text stays text, images stay images, embedded
 * resources become text headed by their uri (a binary resource that is an image becomes
 * an image), resource links and audio become a line of text that names what was left out.
 */
export function blockToContent(block: ContentBlock): ToolContent[] {
  switch (block.type) {
    case 'text':
      return [text(block.text)]
    case 'image':
      return [{ type: 'image', mimeType: block.mimeType, data: block.data }]
    case 'audio':
      return [text(`[audio (${block.mimeType}, ${base64Bytes(block.data)} bytes) not shown]`)]
    case 'resource_link': {
      const about = [block.mimeType, block.description].filter(Boolean).join('; ')
      return [text(`[resource link: ${block.uri}${block.name ? ` "${block.name}"` : ''}${about ? ` (${about})` : ''}]`)]
    }
    case 'resource': {
      const resource = block.resource
      if ('text' in resource && typeof resource.text === 'string') return [text(`Resource ${resource.uri}:\n${resource.text}`)]
      const blob = 'blob' in resource && typeof resource.blob === 'string' ? resource.blob : ''
      const mimeType = resource.mimeType ?? 'application/octet-stream'
      if (mimeType.startsWith('image/') && blob) return [text(`Resource ${resource.uri}:`), { type: 'image', mimeType, data: blob }]
      return [text(`[resource ${resource.uri} (${mimeType}, ${base64Bytes(blob)} bytes of binary data) not shown]`)]
    }
    default:
      return [text(`[unsupported MCP content type "${(block as { type?: unknown }).type}"]`)]
  }
}

/**
 * A `tools/call` result as a call value. `structuredContent` is shown as JSON only when
 * the server sent no content blocks (servers mirror it in a text block otherwise); a
 * pre-2024-11 `toolResult` is shown as JSON.
 */
export function resultToValue(result: Record<string, unknown>): McpCallValue {
  const isError = result.isError === true
  if (Array.isArray(result.content) && result.content.length) {
    return { content: (result.content as ContentBlock[]).flatMap(blockToContent), isError }
  }
  if (result.structuredContent !== undefined) return { content: [text(JSON.stringify(result.structuredContent))], isError }
  if ('toolResult' in result) return { content: [text(JSON.stringify(result.toolResult ?? null))], isError }
  return { content: [], isError }
}
