import { fileURLToPath } from 'node:url'
import type * as acp from '@agentclientprotocol/sdk/unstable'
import type { UserContent } from '@dsh/protocol'
import { quote } from './quote.js'

/**
 * ACP prompt blocks → harness user content, pure. Everything is validated before
 * anything runs: an unsupported or invalid block is a PromptError (→ JSON-RPC -32602).
 * - text → text;
 * - image → image, only PNG, JPEG, GIF or WebP whose bytes match the declared type, at
 *   most 5 MB decoded;
 * - resource_link → a text pointer (name, location, type, size);
 * - resource → its text, wrapped with its URI (binary resources: images as above,
 *   anything else is unsupported);
 * - audio → unsupported.
 */
export class PromptError extends Error {
  override name = 'PromptError'
}

export const IMAGE_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp']
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

function signatureMatches(mimeType: string, bytes: Buffer): boolean {
  switch (mimeType) {
    case 'image/png': return bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
    case 'image/jpeg': return bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff
    case 'image/gif': return bytes.subarray(0, 4).toString('latin1') === 'GIF8'
    case 'image/webp': return bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP'
    default: return false
  }
}

/** A validated image part (throws PromptError naming what is wrong). */
export function imagePart(mimeType: string, data: string, where: string): UserContent {
  if (!IMAGE_TYPES.includes(mimeType)) throw new PromptError(`${where}: image type ${quote(mimeType)} is not supported (use ${IMAGE_TYPES.join(', ')})`)
  const clean = data.replace(/\s+/g, '')
  if (!clean || clean.length % 4 !== 0 || !BASE64.test(clean)) throw new PromptError(`${where}: image data is not valid base64`)
  const size = (clean.length / 4) * 3 - (clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0)
  if (size > MAX_IMAGE_BYTES) throw new PromptError(`${where}: image is ${size} bytes; the limit is ${MAX_IMAGE_BYTES} bytes (5 MB)`)
  if (!signatureMatches(mimeType, Buffer.from(clean.slice(0, 24), 'base64'))) throw new PromptError(`${where}: image bytes are not ${mimeType}`)
  return { type: 'image', mimeType, data: clean }
}

function location(uri: string): string {
  if (uri.startsWith('file://')) {
    try {
      return fileURLToPath(uri)
    } catch {
      return uri
    }
  }
  return uri
}

export function toUserContent(blocks: readonly acp.ContentBlock[]): UserContent[] {
  if (!blocks.length) throw new PromptError('the prompt is empty')
  const out: UserContent[] = []
  blocks.forEach((block, i) => {
    const where = `prompt[${i}]`
    switch (block.type) {
      case 'text':
        out.push({ type: 'text', text: block.text })
        return
      case 'image':
        out.push(imagePart(block.mimeType, block.data, where))
        return
      case 'resource_link': {
        const facts = [block.mimeType ? `type ${block.mimeType}` : '', typeof block.size === 'number' ? `${block.size} bytes` : ''].filter(Boolean)
        const label = block.title ?? block.name
        out.push({ type: 'text', text: `[linked resource: ${label} at ${location(block.uri)}${facts.length ? ` (${facts.join(', ')})` : ''}${block.description ? ` — ${block.description}` : ''}]` })
        return
      }
      case 'resource': {
        const resource = block.resource
        if ('text' in resource) {
          out.push({ type: 'text', text: `<resource uri="${location(resource.uri)}"${resource.mimeType ? ` type="${resource.mimeType}"` : ''}>\n${resource.text}\n</resource>` })
          return
        }
        if (resource.mimeType && IMAGE_TYPES.includes(resource.mimeType)) {
          out.push(imagePart(resource.mimeType, resource.blob, where))
          return
        }
        throw new PromptError(`${where}: binary resource ${quote(resource.uri)} (${resource.mimeType ?? 'unknown type'}) is not supported; embed text or an image`)
      }
      case 'audio':
        throw new PromptError(`${where}: audio is not supported`)
      default:
        throw new PromptError(`${where}: content type ${quote((block as { type: string }).type)} is not supported`)
    }
  })
  return out
}

/** `/name args` when the whole prompt is one text block starting with a slash. */
export function slashCommand(blocks: readonly acp.ContentBlock[]): { name: string; args: string } | undefined {
  const only = blocks.length === 1 ? blocks[0] : undefined
  if (only?.type !== 'text') return undefined
  const m = /^\/([A-Za-z0-9][A-Za-z0-9_.:-]*)(?:\s+([\s\S]*))?$/.exec(only.text.trim())
  return m ? { name: m[1]!, args: (m[2] ?? '').trim() } : undefined
}
