import type { ModelConfig, UserContent } from '@dsh/protocol'
import type { LlmService } from '../llm/service.js'

declare module '@dsh/protocol' {
  interface SessionEventMap {
    /** The session's title for lists (`prompt`: from the first prompt; `model`: summarised; `user`: set by hand). */
    'session/title': { title: string; source: 'prompt' | 'model' | 'user' }
  }
}

export const TITLE_MAX = 60

/**
 * A title from free text (pure): the first non-empty line with whitespace collapsed and
 * leading markdown markers (`#`, `>`, `-`, `*`) and surrounding quotes dropped; over
 * TITLE_MAX characters it is cut at a word boundary (a hard cut when a single word is
 * too long) and ends with `…`. Undefined when nothing is left.
 */
export function titleFromText(text: string): string | undefined {
  const line = text.split('\n').map((l) => l.replace(/\s+/g, ' ').trim()).find((l) => l.length > 0)
  if (!line) return undefined
  const clean = line.replace(/^(?:[#>*-]+\s*)+/, '').replace(/^["'`]+|["'`]+$/g, '').trim()
  if (!clean) return undefined
  const chars = [...clean]
  if (chars.length <= TITLE_MAX) return clean
  const cut = chars.slice(0, TITLE_MAX - 1).join('')
  // the cut already ends a word when the next character is a space
  const space = chars[TITLE_MAX - 1] === ' ' ? cut.length : cut.lastIndexOf(' ')
  const head = space >= TITLE_MAX / 3 ? cut.slice(0, space) : cut
  return `${head.replace(/[\s,.;:!?-]+$/, '')}…`
}

/** The text parts of a user message, joined (pure). */
export function promptText(content: readonly UserContent[]): string {
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('\n')
}

export const TITLE_SYSTEM = 'You name conversations. Reply with a title of at most eight words for the conversation that starts with the user message below: no quotes, no trailing period, nothing else.'

/**
 * Asks the model for a title (one attempt, no tools, a small output limit) and returns
 * it cleaned, or throws with the failure. Never logs anything itself.
 */
export async function summarizeTitle(llm: LlmService, config: ModelConfig, prompt: string, signal: AbortSignal): Promise<string> {
  const endpoint = llm.resolve(config.provider)
  const request = {
    config: { provider: config.provider, model: config.model, maxTokens: 64 },
    system: TITLE_SYSTEM,
    messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: prompt.slice(0, 4000) }] }],
    tools: [], signal,
  }
  let text = ''
  for await (const chunk of llm.stream(request, endpoint)) {
    if (chunk.type === 'text-delta') text += chunk.text
    else if (chunk.type === 'finish' && chunk.reason === 'error') throw new Error(chunk.error ? `${chunk.error.code}: ${chunk.error.message}` : 'the title request failed')
    else if (chunk.type === 'finish' && chunk.reason === 'aborted') throw new Error('the title request was aborted')
  }
  const title = titleFromText(text)?.replace(/\.+$/, '')
  if (!title) throw new Error('the model returned an empty title')
  return title
}
