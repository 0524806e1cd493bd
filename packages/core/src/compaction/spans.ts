import type { SessionEvent } from '@dsh/protocol'
import { MessageDeriver, type HistoryItem } from '../session/derive.js'

/** One message of the model history with the seq range of the log it stands for. */
export type VisibleItem = HistoryItem

/**
 * Pure: the model history of a log with each message's seq span. The messages are exactly
 * `deriveMessages(events)` (the same `MessageDeriver` fold); the spans say which
 * `[fromSeq, toSeq]` a `history/replace` must name to replace a run of them.
 * `events` must be append-only between calls (a session log); the fold is cached per array.
 */
export function visibleItems(events: readonly SessionEvent[]): VisibleItem[] {
  // A session log only grows: fold just the events added since the last call on the same
  // array (every step asks, so a full fold would make each step cost O(session)). The
  // message objects are kept too, so per-message estimates are computed once.
  let fold = folds.get(events)
  if (!fold || fold.count > events.length) folds.set(events, fold = { count: 0, deriver: new MessageDeriver() })
  for (let i = fold.count; i < events.length; i++) fold.deriver.push(events[i]!)
  fold.count = events.length
  return fold.deriver.items
}

const folds = new WeakMap<readonly SessionEvent[], { count: number; deriver: MessageDeriver }>()

/** A run of history items to summarise: `items[first .. first + count)`. */
export interface Span {
  first: number
  count: number
  fromSeq: number
  toSeq: number
  tokens: number
}

export interface SpanLimits {
  /** Tokens of the most recent history kept verbatim (the span ends before them). */
  keepTokens: number
  /** Most tokens one summary request may carry (the span is cut at a balanced point below it). */
  maxSpanTokens: number
}

/**
 * Pure: picks the span of history to summarise, or undefined when nothing is worth it.
 * Rules: a span never starts or ends between an assistant's tool calls and their results
 * (it never ends just before a `tool` message); it never contains the most recent user
 * message (not a summary); it leaves the newest `keepTokens` of history alone. Of the two
 * candidate runs — before the latest user message, and after it (inside a long turn) —
 * the larger is taken, from its oldest item, up to `maxSpanTokens` (at least one exchange).
 * A run worth summarising holds a non-summary item or at least two items.
 */
export function pickSpan(items: readonly VisibleItem[], tokens: readonly number[], limits: SpanLimits): Span | undefined {
  const n = items.length
  const boundary = (i: number) => i >= n || items[i]!.message.role !== 'tool'
  // the earliest balanced boundary whose suffix fits in keepTokens
  let keepFrom = n
  let suffix = 0
  for (let i = n - 1; i >= 0; i--) {
    suffix += tokens[i]!
    if (suffix > limits.keepTokens) break
    if (boundary(i)) keepFrom = i
  }
  let latestUser = -1
  for (let i = n - 1; i >= 0; i--) {
    if (items[i]!.message.role === 'user' && !items[i]!.summary) {
      latestUser = i
      break
    }
  }
  const runs: [number, number][] = latestUser < 0 || latestUser >= keepFrom
    ? [[0, keepFrom]]
    : [[0, latestUser], [latestUser + 1, keepFrom]]
  let best: [number, number] | undefined
  let bestTokens = 0
  for (const [start, end] of runs) {
    if (!worthIt(items, start, end)) continue
    const total = sum(tokens, start, end)
    if (total > bestTokens) {
      best = [start, end]
      bestTokens = total
    }
  }
  if (!best) return undefined
  const [start, end] = best
  // cut at the last balanced boundary under maxSpanTokens, but take at least one exchange
  let cut = -1
  let acc = 0
  for (let i = start; i < end; i++) {
    acc += tokens[i]!
    if (boundary(i + 1) && (acc <= limits.maxSpanTokens || cut < 0)) cut = i + 1
    if (acc > limits.maxSpanTokens && cut >= 0) break
  }
  if (cut < 0 || !worthIt(items, start, cut)) return undefined
  return { first: start, count: cut - start, fromSeq: items[start]!.lo, toSeq: items[cut - 1]!.hi, tokens: sum(tokens, start, cut) }
}

function worthIt(items: readonly VisibleItem[], start: number, end: number): boolean {
  if (end - start >= 2) return true
  return end - start === 1 && !items[start]!.summary
}

function sum(values: readonly number[], start: number, end: number): number {
  let total = 0
  for (let i = start; i < end; i++) total += values[i]!
  return total
}
