import type { Context } from '@deepseek-ai/cordis'
import type { ModelConfig, SessionEvent, UserContent } from '@dsh/protocol'
import { z } from 'zod'
import type { AgentService } from '../agent/service.js'
import type { LlmService } from '../llm/service.js'
import type { Session } from '../session/session.js'
import { promptText, summarizeTitle, titleFromText } from '../titles/titles.js'

export const name = 'titles'
export const inject = ['sessions']
export const Config = z.object({
  /** Also ask the model for a title, in the background (one small request per session; needs `llm`). */
  summarize: z.boolean().default(false),
  /** Model for the summary; default: the session agent's model, else the default model. */
  provider: z.string().optional(),
  model: z.string().optional(),
}).default({ summarize: false })

/**
 * Session titles: at the first `user/message` of a session without a title, logs
 * `session/title {title, source: 'prompt'}` (ignorable) from its first line; with
 * `summarize`, then asks the model in the background — never blocking the turn — and
 * logs `{source: 'model'}`, unless a user title came first. A failed summary is an
 * ignorable `notice`. `ctx.sessions.list()` shows the latest title.
 */
export function apply(ctx: Context, config: z.output<typeof Config>): void {
  ctx.sessions.defineEventType('session/title')
  const logger = ctx.logger('titles')
  const stop = new AbortController()
  ctx.effect(() => () => stop.abort(), 'titles: abort summaries')

  const append = (session: Session, type: string, data: Parameters<Session['append']>[1], ignorable: boolean) => {
    if (session.closed) return false
    try {
      session.append(type, data, ignorable ? { ignorable: true } : undefined)
      return true
    } catch (error) {
      logger.warn('could not log %s on %s: %s', type, session.id, error)
      return false
    }
  }

  // agents and llm are optional neighbours (not injected): titles from prompts need neither
  const modelFor = (llm: LlmService, session: Session): ModelConfig => {
    const agents = ctx.get('agents') as AgentService | undefined
    const agentConfig = agents?.get(session.id)?.modelConfig()
    if (config.provider || config.model || !agentConfig) {
      const { provider, model } = llm.defaults({ provider: config.provider ?? agentConfig?.provider, model: config.model })
      return { provider, model }
    }
    return agentConfig
  }

  const summarize = async (session: Session, text: string) => {
    try {
      const llm = ctx.get('llm') as LlmService | undefined
      if (!llm) throw new Error('no llm service is mounted')
      const title = await summarizeTitle(llm, modelFor(llm, session), text, stop.signal)
      if (session.last('session/title')?.data.source === 'user') return
      append(session, 'session/title', { title, source: 'model' }, true)
    } catch (error) {
      if (stop.signal.aborted) return
      const message = `could not summarise a session title: ${error instanceof Error ? error.message : String(error)}`
      if (!append(session, 'notice', { level: 'warn', message, source: 'titles' }, true)) logger.warn(message)
    }
  }

  ctx.on('session/event', (session: Session, event: SessionEvent) => {
    if (event.type !== 'user/message' || session.last('session/title')) return
    const text = promptText((event.data as unknown as { content: UserContent[] }).content)
    const title = titleFromText(text)
    if (!title) return
    // deferred: appending inside a session/event listener would reorder events for later listeners
    queueMicrotask(() => {
      if (session.last('session/title')) return
      if (!append(session, 'session/title', { title, source: 'prompt' }, true)) return
      if (config.summarize) void summarize(session, text)
    })
  })
}

// Until @dsh/core's index exports titles/: the pure helpers.
export { TITLE_MAX, TITLE_SYSTEM, promptText, titleFromText } from '../titles/titles.js'
