import type { ModelConfig, ModelMessage, SessionEvent } from '@dsh/protocol'
import { SUMMARY_PREFIX } from '../session/derive.js'

/** The system prompt of a summary request. */
export const SUMMARY_SYSTEM = `You condense an earlier part of a conversation between a user and a coding agent, \
so that the agent can continue the work with a shorter history. Write a summary that keeps what the agent still needs: \
the user's goals, instructions and preferences; decisions taken and why; files, commands and tools used and the results \
that matter (paths, names, numbers, errors and their fixes); and the work that is still open. \
Be concise and factual, use plain text or short lists, never invent anything, and do not address the user.`

/** Longest text kept from one part of the transcript; longer parts keep their head and tail. */
export const MAX_PART_CHARS = 6_000

/** Pure: `text` cut to `max` characters by eliding its middle. */
export function elide(text: string, max = MAX_PART_CHARS): string {
  if (text.length <= max) return text
  const head = Math.ceil(max * 0.6)
  const tail = max - head
  return `${text.slice(0, head)}\n[… ${text.length - max} characters elided …]\n${text.slice(text.length - tail)}`
}

/**
 * Pure: the messages as a plain-text transcript (the summary request sends history as text,
 * so it needs no tool schemas and no provider-specific pairing of calls and results).
 * Reasoning is left out; images are named, not sent.
 */
export function transcript(messages: readonly ModelMessage[]): string {
  const out: string[] = []
  for (const message of messages) {
    if (message.role === 'tool') {
      const body = message.content.map((p) => (p.type === 'text' ? p.text : '[image]')).join('\n')
      out.push(`[tool result: ${message.name}${message.isError ? ', error' : ''}]\n${elide(body)}`)
      continue
    }
    if (message.role === 'user') {
      const body = message.content.map((p) => (p.type === 'text' ? p.text : '[image]')).join('\n')
      out.push(body.startsWith(SUMMARY_PREFIX)
        ? `[summary of what came before]\n${elide(body.slice(SUMMARY_PREFIX.length))}`
        : `[user]\n${elide(body)}`)
      continue
    }
    for (const block of message.content) {
      if (block.type === 'text' && block.text) out.push(`[assistant]\n${elide(block.text)}`)
      else if (block.type === 'tool-call') out.push(`[assistant called ${block.name}]\n${elide(block.arguments)}`)
    }
  }
  return out.join('\n\n')
}

/** Pure: the user text of a summary request. */
export function summaryPrompt(messages: readonly ModelMessage[], instructions?: string): string {
  const focus = instructions?.trim() ? `\n\nWhen summarising, pay particular attention to: ${instructions.trim()}` : ''
  return `Summarise this part of the conversation (it will replace it in the agent's history):\n\n` +
    `<conversation>\n${transcript(messages)}\n</conversation>${focus}`
}

/** What `compaction/start` logs: enough to rebuild the summary request from the log alone. */
export interface SummaryRequestLog {
  system: string
  config: ModelConfig
  /** The request's only message (user text). */
  prompt: string
}

export type CompactionReason = 'threshold' | 'overflow' | 'manual'

declare module '@dsh/protocol' {
  interface SessionEventMap {
    /**
     * A summary of history items with seq in [fromSeq, toSeq] was requested (logged just
     * before the request leaves). `request` is the request as sent: no tools, one user message.
     */
    'compaction/start': { fromSeq: number; toSeq: number; messages: number; tokens: number; reason: CompactionReason; request: SummaryRequestLog }
    /** A summary failed (error, abort, empty answer): history was left as it was. */
    'compaction/failed': { reason: string; fromSeq?: number; toSeq?: number }
  }
}

/** Pure: the model request a `compaction/start` event stands for. */
export function summaryRequestOf(event: SessionEvent<'compaction/start'>): { system: string; config: ModelConfig; tools: []; messages: ModelMessage[] } {
  const { system, config, prompt } = event.data.request
  return { system, config, tools: [], messages: [{ role: 'user', content: [{ type: 'text', text: prompt }] }] }
}
