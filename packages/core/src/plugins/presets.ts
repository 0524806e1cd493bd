import type { Context } from '@deepseek-ai/cordis'
import type { SessionEvent } from '@dsh/protocol'
import { join } from 'node:path'
import { z } from 'zod'
import { resolveHome } from '../home/paths.js'
import { agentCommand } from '../presets/command.js'
import { PresetService } from '../presets/service.js'
import type { Session } from '../session/session.js'

export const name = 'presets'
export const inject = ['sessions', 'prompt']
export const Config = z.object({
  /** The preset of a session that never chose one. */
  default: z.string().min(1).default('standard'),
  /** User presets directory; default `$DSH_HOME/presets`. */
  dir: z.string().optional(),
}).default({ default: 'standard' })

/**
 * `ctx.presets`, the `persona` prompt section (order 50), `/agent` when commands are
 * mounted, and the record of the default preset at a session's first turn (so a later
 * change of the default does not change a resumed conversation).
 */
export function apply(ctx: Context, config: z.output<typeof Config>): void {
  ctx.sessions.defineEventType('agent/preset')
  const presets = new PresetService(ctx, { default: config.default, dir: config.dir ?? join(resolveHome(), 'presets') })
  ctx.effect(() => ctx.prompt.section({
    id: 'persona', order: 50,
    render: (env) => {
      const session = ctx.sessions.get(env.sessionId)
      return (session ? presets.current(session) : presets.get(presets.defaultId)).persona
    },
  }), 'prompt.section(persona)')
  ctx.on('session/event', (session: Session, event: SessionEvent) => {
    if (event.type !== 'turn/start' || session.last('agent/preset')) return
    // deferred: appending inside a session/event listener would reorder events for later listeners
    queueMicrotask(() => {
      if (session.closed || session.last('agent/preset')) return
      try {
        session.append('agent/preset', { preset: presets.current(session).id })
      } catch (error) {
        ctx.logger('presets').warn('could not record the agent preset of %s: %s', session.id, error)
      }
    })
  })
  ctx.inject(['commands'], (c) => { c.commands.register(agentCommand(presets)) })
}

// For surfaces that import the plugin module (headless): the service type.
export { PresetService } from '../presets/service.js'
export type { AgentPreset } from '../presets/presets.js'
