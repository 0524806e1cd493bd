import type { ModelMessage, SessionEvent, SessionEventMap } from '@dsh/protocol'

/** The text that stands in for a replaced stretch of history. */
export const SUMMARY_PREFIX = '[Summary of earlier conversation]\n'

/** One message of the model history with the seq range `[lo, hi]` of the log it stands for. */
export interface HistoryItem {
  lo: number
  hi: number
  message: ModelMessage
  /** A summary left by a `history/replace`. */
  summary: boolean
}

/**
 * Folds a session log into the model history, incrementally: `push` each event in
 * log order, read `messages` at any time. Contract:
 * - `user/message` → user, `assistant/message` → assistant (skipped when its content
 *   is empty), `tool/result` → tool. Every other event type never reaches the model.
 * - `history/replace {fromSeq, toSeq, summary}` removes the model-visible items logged
 *   before it whose whole seq span lies in [fromSeq, toSeq] (a summary's span is its own
 *   range, so a later replace may cover an earlier one) and puts one user message
 *   `SUMMARY_PREFIX + summary` in their place (or, when nothing was covered, before the
 *   first item whose span starts after fromSeq).
 * Messages are frozen and share the (frozen) content arrays of their events; a message
 * keeps its identity for as long as it stays in the history (adapters cache by it).
 */
export class MessageDeriver {
  private readonly entries: HistoryItem[] = []
  /** `entries[i].message` for each i, kept beside them so `messages` is one copy, not a map. */
  private readonly list: ModelMessage[] = []

  push(event: SessionEvent): void {
    switch (event.type) {
      case 'user/message': {
        const data = (event as SessionEvent<'user/message'>).data
        this.add(event.seq, { role: 'user', content: data.content })
        return
      }
      case 'assistant/message': {
        const data = (event as SessionEvent<'assistant/message'>).data
        if (data.content.length > 0) this.add(event.seq, { role: 'assistant', content: data.content })
        return
      }
      case 'tool/result': {
        const data = (event as SessionEvent<'tool/result'>).data
        this.add(event.seq, { role: 'tool', callId: data.callId, name: data.name, content: data.content, isError: data.isError })
        return
      }
      case 'history/replace':
        this.replace((event as SessionEvent<'history/replace'>).data)
        return
    }
  }

  /** A fresh array (the messages themselves are shared). */
  get messages(): ModelMessage[] {
    return this.list.slice()
  }

  /** The same history with each message's seq span: a fresh array (the items themselves are shared). */
  get items(): HistoryItem[] {
    return this.entries.slice()
  }

  /** How many messages the history holds now. */
  get size(): number {
    return this.entries.length
  }

  /** The item at `index` of the history (0 = oldest), without copying the list. */
  item(index: number): HistoryItem | undefined {
    return this.entries[index]
  }

  private add(seq: number, message: ModelMessage): void {
    const frozen = Object.freeze(message)
    this.entries.push({ lo: seq, hi: seq, message: frozen, summary: false })
    this.list.push(frozen)
  }

  private replace({ fromSeq, toSeq, summary }: SessionEventMap['history/replace']): void {
    const message: ModelMessage = Object.freeze({ role: 'user', content: Object.freeze([Object.freeze({ type: 'text', text: SUMMARY_PREFIX + summary })]) } as ModelMessage)
    const { entries } = this
    let at = -1
    let write = 0
    for (let read = 0; read < entries.length; read++) {
      const entry = entries[read]!
      if (entry.lo >= fromSeq && entry.hi <= toSeq) {
        if (at < 0) at = write
        continue
      }
      if (at < 0 && entry.lo > fromSeq) at = write
      entries[write++] = entry
    }
    entries.length = write
    entries.splice(at < 0 ? write : at, 0, { lo: fromSeq, hi: toSeq, message, summary: true })
    this.list.length = 0
    for (const entry of entries) this.list.push(entry.message)
  }
}

/** Pure: the model history of a log (see `MessageDeriver` for the rules). */
export function deriveMessages(events: readonly SessionEvent[]): ModelMessage[] {
  const deriver = new MessageDeriver()
  for (const event of events) deriver.push(event)
  return deriver.messages
}
