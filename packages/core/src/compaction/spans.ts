import type { SessionEvent } from '@dsh/protocol'
import { MessageDeriver, type HistoryItem } from '../session/derive.js'
import { estimateMessage } from './tokens.js'

/** One message of the model history with the seq range of the log it stands for. */
export type VisibleItem = HistoryItem

/**
 * Pure: the model history of a log with each message's seq span. The messages are exactly
 * `deriveMessages(events)` (the same `MessageDeriver` fold); the spans say which
 * `[fromSeq, toSeq]` a `history/replace` must name to replace a run of them.
 * `events` must be append-only between calls (a session log); the fold is cached per array.
 */
export function visibleItems(events: readonly SessionEvent[]): VisibleItem[] {
  return foldOf(events).deriver.items
}

/**
 * Pure: the summed `estimateMessage` of `visibleItems(events)`, kept up to date as `events`
 * grows (O(new events) per call; a `history/replace` makes the next call re-add them all).
 */
export function historyTokens(events: readonly SessionEvent[]): number {
  const fold = foldOf(events)
  if (fold.tokens === undefined) {
    let total = 0
    for (let i = 0; i < fold.deriver.size; i++) total += estimateMessage(fold.deriver.item(i)!.message)
    fold.tokens = total
  }
  return fold.tokens
}

/**
 * Pure: the summed `estimateMessage` of the items of `visibleItems(events)` whose span starts
 * after `seq`. While the items' `lo` never decreases along the history (always, unless a
 * `history/replace` named a span after itself) they are a suffix, read from the end: O(that
 * suffix); otherwise every item is looked at.
 */
export function historyTokensAfter(events: readonly SessionEvent[], seq: number): number {
  const { deriver, sorted } = foldOf(events)
  let total = 0
  if (sorted) {
    for (let i = deriver.size - 1; i >= 0 && deriver.item(i)!.lo > seq; i--) total += estimateMessage(deriver.item(i)!.message)
  } else {
    for (let i = 0; i < deriver.size; i++) if (deriver.item(i)!.lo > seq) total += estimateMessage(deriver.item(i)!.message)
  }
  return total
}

/**
 * The fold of one log array: events `[0, count)` pushed into `deriver`; `tokens` the summed
 * estimate of its items (undefined after a replace, until recounted); `sorted` whether the
 * items' `lo` never decreases along the history.
 */
interface Fold { count: number; deriver: MessageDeriver; tokens: number | undefined; sorted: boolean }

// A session log only grows: fold just the events added since the last call on the same array
// (every step asks, so a full fold would make each step cost O(session)). The message objects
// are kept too, so per-message estimates are computed once.
const folds = new WeakMap<readonly SessionEvent[], Fold>()

function foldOf(events: readonly SessionEvent[]): Fold {
  let fold = folds.get(events)
  if (!fold || fold.count > events.length) folds.set(events, fold = { count: 0, deriver: new MessageDeriver(), tokens: 0, sorted: true })
  const { deriver } = fold
  for (let i = fold.count; i < events.length; i++) {
    const event = events[i]!
    const size = deriver.size
    deriver.push(event)
    if (event.type === 'history/replace') {
      fold.tokens = undefined
      fold.sorted = true
      for (let j = 1; j < deriver.size && fold.sorted; j++) fold.sorted = deriver.item(j - 1)!.lo <= deriver.item(j)!.lo
    } else if (deriver.size > size) {
      const added = deriver.item(size)!
      if (fold.tokens !== undefined) fold.tokens += estimateMessage(added.message)
      if (size > 0 && deriver.item(size - 1)!.lo > added.lo) fold.sorted = false
    }
  }
  fold.count = events.length
  return fold
}

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
