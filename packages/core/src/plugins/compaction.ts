import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { formatTokens } from '../commands/status.js'
import type { CommandSpec } from '../commands/registry.js'
import { CompactionService } from '../compaction/service.js'
import type { Session } from '../session/session.js'

export const name = 'compaction'
export const inject = ['sessions', 'llm']
export const Config = z.object({
  /** Compact automatically before a request that would cross `threshold` (and on a provider overflow). */
  auto: z.boolean().default(true),
  /** Overrides the model catalogue's context window (tests, models the catalogue does not know). */
  contextWindow: z.number().int().positive().optional(),
  /** Share of the window a request may fill before older history is summarised. */
  threshold: z.number().gt(0).lte(1).default(0.8),
  /** Tokens of recent history kept verbatim; default 30% of the window. */
  keepRecentTokens: z.number().int().nonnegative().optional(),
  /** Output cap of a summary request (never more than a quarter of the window). */
  summaryMaxTokens: z.number().int().positive().default(4096),
  /** Summary requests at most before one model request. */
  maxRounds: z.number().int().min(1).default(3),
}).default({ auto: true, threshold: 0.8, summaryMaxTokens: 4096, maxRounds: 3 })

/**
 * `ctx.compaction`, automatic compaction and `/compact` (when commands are mounted).
 * - `agent/request`: while the request would cross the threshold, summarise a span and
 *   return the request re-derived from the log. A failed summary stops automatic
 *   compaction for the rest of that turn (the turn goes on uncompacted).
 * - `agent/request-error` CONTEXT_WINDOW_EXCEEDED: compact once per step and retry at once.
 */
export function apply(ctx: Context, config: z.output<typeof Config>): void {
  ctx.sessions.defineEventType('compaction/start')
  ctx.sessions.defineEventType('compaction/failed')
  const service = new CompactionService(ctx, config)
  /** turn/start seq of the turn whose automatic compaction failed. */
  const failedTurn = new WeakMap<Session, number>()
  /** step/start seq of the step whose overflow was already compacted. */
  const overflowStep = new WeakMap<Session, number>()

  if (config.auto) {
    ctx.on('agent/request', async (agent, _request, next) => {
      const built = await next()
      const { session } = agent
      const turn = session.last('turn/start')?.seq ?? -1
      if (failedTurn.get(session) === turn) return built
      let changed = false
      for (let round = 0; round < config.maxRounds && service.over(agent, built); round++) {
        const result = await service.compact(agent, { reason: 'threshold', request: built, signal: agent.signal })
        if (!result.ok) {
          if (result.attempted) failedTurn.set(session, turn)
          break
        }
        changed = true
      }
      return changed ? { ...built, messages: session.deriveMessages() } : built
    })

    ctx.on('agent/request-error', async (agent, failure, _attempt, next) => {
      if (failure.code !== 'CONTEXT_WINDOW_EXCEEDED') return next()
      const { session } = agent
      const step = session.last('step/start')?.seq ?? -1
      if (overflowStep.get(session) === step) return next()
      overflowStep.set(session, step)
      const result = await service.compact(agent, { reason: 'overflow', signal: agent.signal })
      return result.ok ? { retry: true, delayMs: 0 } : next()
    })
  }

  ctx.inject(['commands'], (c) => { c.commands.register(compactCommand(service)) })
}

/** `/compact [focus]`: summarise older history now (after the running turn, if any). */
export function compactCommand(service: CompactionService): CommandSpec {
  return {
    name: 'compact', description: 'Summarise older history to free context', argumentHint: '[what the summary should focus on]', source: 'builtin',
    async run({ agent, args, signal }) {
      // between turns only: a running turn is let finish first
      await agent.idle()
      const result = await service.compact(agent, { reason: 'manual', signal, instructions: args })
      if (!result.ok) {
        return { reply: result.attempted ? `Compaction failed: ${result.reason}. History is unchanged.` : `Nothing was compacted: ${result.reason}.` }
      }
      const window = service.window(agent)
      return {
        reply: `Compacted ${result.messages} messages into a summary: the next request holds ~${formatTokens(result.tokensAfter)} tokens ` +
          `(was ~${formatTokens(result.tokensBefore)}) of a ${formatTokens(window)} window.`,
      }
    },
  }
}
