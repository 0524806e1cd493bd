import type { ModelMessage, SessionEvent, SessionEventMap } from '@dsh/protocol'

/** The text that stands in for a replaced stretch of history. */
export const SUMMARY_PREFIX = '[Summary of earlier conversation]\n'

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
 * Messages share the (frozen) content arrays of their events; callers must not mutate them.
 */
export class MessageDeriver {
  private readonly items: ModelMessage[] = []
  /** spans[i] = [lo, hi]: the seq range that items[i] stands for. */
  private readonly lows: number[] = []
  private readonly highs: number[] = []

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
    return this.items.slice()
  }

  private add(seq: number, message: ModelMessage): void {
    this.items.push(message)
    this.lows.push(seq)
    this.highs.push(seq)
  }

  private replace({ fromSeq, toSeq, summary }: SessionEventMap['history/replace']): void {
    const message: ModelMessage = { role: 'user', content: [{ type: 'text', text: SUMMARY_PREFIX + summary }] }
    let at = -1
    let write = 0
    const n = this.items.length
    for (let read = 0; read < n; read++) {
      const lo = this.lows[read]!
      const hi = this.highs[read]!
      if (lo >= fromSeq && hi <= toSeq) {
        if (at < 0) at = write
        continue
      }
      if (at < 0 && lo > fromSeq) at = write
      this.items[write] = this.items[read]!
      this.lows[write] = lo
      this.highs[write] = hi
      write++
    }
    this.items.length = write
    this.lows.length = write
    this.highs.length = write
    if (at < 0) at = write
    this.items.splice(at, 0, message)
    this.lows.splice(at, 0, fromSeq)
    this.highs.splice(at, 0, toSeq)
  }
}

/** Pure: the model history of a log (see `MessageDeriver` for the rules). */
export function deriveMessages(events: readonly SessionEvent[]): ModelMessage[] {
  const deriver = new MessageDeriver()
  for (const event of events) deriver.push(event)
  return deriver.messages
}
