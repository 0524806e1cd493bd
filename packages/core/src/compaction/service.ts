import { Service, type Context } from '@deepseek-ai/cordis'
import { errorInfo, textOf, type ModelMessage, type ProviderEndpoint, type ToolSchema } from '@dsh/protocol'
import type { Agent } from '../agent/agent.js'
import { consumeStream } from '../agent/stream.js'
import type { Session } from '../session/session.js'
import { historyTokens, historyTokensAfter, pickSpan, visibleItems } from './spans.js'
import { SUMMARY_SYSTEM, summaryPrompt, type CompactionReason } from './summary.js'
import { estimateMessage, estimateText, usageBaseline, type ContextTokens } from './tokens.js'

declare module '@deepseek-ai/cordis' {
  interface Context { compaction: CompactionService }
}

export interface CompactionConfig {
  /** Overrides the model catalogue's context window (tests, unknown models). */
  contextWindow?: number | undefined
  /** Compact when the next request would exceed this share of the window. */
  threshold: number
  /** Tokens of recent history kept verbatim; default 30% of the window. */
  keepRecentTokens?: number | undefined
  /** Output cap of a summary request; never more than a quarter of the window. */
  summaryMaxTokens: number
  /** Summary rounds at most before one request (each round is one summary request). */
  maxRounds: number
}

export type CompactResult =
  | { ok: true; messages: number; fromSeq: number; toSeq: number; tokensBefore: number; tokensAfter: number }
  | { ok: false; reason: string; attempted: boolean }

export interface CompactOptions {
  reason: CompactionReason
  /** Aborts the summary request (history then stays as it was). */
  signal?: AbortSignal | undefined
  /** Extra guidance for the summary (from `/compact <text>`). */
  instructions?: string | undefined
  /** The system prompt and tools the next request carries (default: the last `request/header`). */
  request?: { system: string; tools: readonly ToolSchema[] } | undefined
}

/**
 * `ctx.compaction`: token accounting of a session's next request against the model's
 * context window, and compaction — an older balanced span of history summarised by the
 * model into one `history/replace` (the log is never rewritten). Every summary request is
 * logged (`compaction/start` carries it whole) before it leaves; a failed one logs
 * `compaction/failed` and leaves history untouched.
 */
export class CompactionService extends Service {
  private readonly running = new Set<string>()

  constructor(ctx: Context, readonly config: CompactionConfig) {
    super(ctx, 'compaction')
  }

  /** The context window of the agent's current model. */
  window(agent: Agent): number {
    if (this.config.contextWindow) return this.config.contextWindow
    const { provider, model } = agent.modelConfig()
    return this.ctx.llm.modelInfo(provider, model).contextWindow
  }

  /**
   * Tokens the next request holds: provider usage when the log has it, an estimate otherwise.
   * Asked every step: O(events since the last call and since the last answer), not O(session).
   */
  usage(agent: Agent, request?: CompactOptions['request']): ContextTokens {
    const window = this.window(agent)
    const { events } = agent.session
    const fromUsage = usageBaseline(events, (seq) => historyTokensAfter(events, seq))
    if (fromUsage !== undefined) return { tokens: fromUsage, window, source: 'usage' }
    return { tokens: fixedCost(request ?? lastHeader(agent.session)) + historyTokens(events), window, source: 'estimate' }
  }

  /** Whether the next request crosses the threshold. */
  over(agent: Agent, request?: CompactOptions['request']): boolean {
    const use = this.usage(agent, request)
    return use.tokens > use.window * this.config.threshold
  }

  /**
   * Summarises one span of the agent's history (see `pickSpan`) and appends the
   * replacement. Never throws: a failure is returned (and logged when a summary was asked).
   */
  async compact(agent: Agent, options: CompactOptions): Promise<CompactResult> {
    const { session } = agent
    if (this.running.has(session.id)) return { ok: false, reason: 'a compaction of this session is already running', attempted: false }
    this.running.add(session.id)
    try {
      return await this.summarise(agent, options)
    } finally {
      this.running.delete(session.id)
    }
  }

  private async summarise(agent: Agent, options: CompactOptions): Promise<CompactResult> {
    const { session } = agent
    const { use: { tokens: tokensBefore, window }, items, costs, fixed } = this.measure(agent, options.request ?? lastHeader(session))
    const summaryMax = Math.max(64, Math.min(this.config.summaryMaxTokens, Math.floor(window / 4)))
    // a forced compaction (overflow, /compact) keeps at most 30% of the history: the
    // provider says the window is smaller than we think, or the user asked for it
    const keep = this.config.keepRecentTokens ?? Math.floor(window * 0.3)
    const history = costs.reduce((a, b) => a + b, 0)
    const span = pickSpan(items, costs, {
      keepTokens: options.reason === 'threshold' ? keep : Math.min(keep, Math.floor(history * 0.3)),
      maxSpanTokens: Math.max(1, window - summaryMax - estimateText(SUMMARY_SYSTEM) - 200),
    })
    if (!span) return { ok: false, reason: 'nothing to compact: the history is already as short as it can get', attempted: false }
    const { provider, model } = agent.modelConfig()
    const config = { provider, model, maxTokens: summaryMax }
    const prompt = summaryPrompt(items.slice(span.first, span.first + span.count).map((i) => i.message), options.instructions)
    const where = { fromSeq: span.fromSeq, toSeq: span.toSeq }
    let endpoint: ProviderEndpoint
    try {
      endpoint = this.ctx.llm.resolve(provider)
    } catch (error) {
      return this.fail(session, `the summary request could not be sent: ${errorInfo(error).message}`, where)
    }
    session.append('compaction/start', {
      ...where, messages: span.count, tokens: span.tokens, reason: options.reason, request: { system: SUMMARY_SYSTEM, config, prompt },
    })
    const signal = options.signal ?? new AbortController().signal
    const messages: ModelMessage[] = [{ role: 'user', content: [{ type: 'text', text: prompt }] }]
    const outcome = await consumeStream(this.ctx.llm.stream({ config, system: SUMMARY_SYSTEM, tools: [], messages, signal }, endpoint), () => {})
    if (signal.aborted || outcome.finish === 'aborted') return this.fail(session, 'the summary request was cancelled', where)
    if (outcome.finish === 'error') return this.fail(session, `the summary request failed: ${outcome.error?.message ?? 'unknown error'}`, where)
    const summary = textOf(outcome.blocks).trim()
    if (!summary) return this.fail(session, 'the model returned an empty summary', where)
    session.append('history/replace', { ...where, summary })
    const tokensAfter = fixed + visibleItems(session.events).reduce((n, i) => n + estimateMessage(i.message), 0)
    return { ok: true, messages: span.count, ...where, tokensBefore, tokensAfter }
  }

  /** The history items with their estimates, the request's fixed cost, and what `usage` says. */
  private measure(agent: Agent, request: { system: string; tools: readonly ToolSchema[] }) {
    const items = visibleItems(agent.session.events)
    const costs = items.map((i) => estimateMessage(i.message))
    return { use: this.usage(agent, request), items, costs, fixed: fixedCost(request) }
  }

  private fail(session: Session, reason: string, where: { fromSeq: number; toSeq: number }): CompactResult {
    this.ctx.logger('compaction').warn('session %s: compaction failed: %s', session.id, reason)
    if (!session.closed) session.append('compaction/failed', { reason, ...where })
    return { ok: false, reason, attempted: true }
  }
}

function lastHeader(session: Session): { system: string; tools: readonly ToolSchema[] } {
  const header = session.last('request/header')?.data
  return header ? { system: header.system, tools: header.tools } : { system: '', tools: [] }
}

function fixedCost(request: { system: string; tools: readonly ToolSchema[] }): number {
  return estimateText(request.system) + estimateText(JSON.stringify(request.tools))
}
