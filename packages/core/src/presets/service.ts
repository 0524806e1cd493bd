import { Service, type Context } from '@deepseek-ai/cordis'
import { DshError } from '@dsh/protocol'
import type { AgentOptions } from '../agent/types.js'
import type { Session } from '../session/session.js'
import { SHIPPED_PRESETS, loadPresetDir, toolMatcher, type AgentPreset, type PresetProblem } from './presets.js'

declare module '@dsh/protocol' {
  interface SessionEventMap {
    /** The session's agent preset (set before the first turn; recorded at the first turn when never chosen). */
    'agent/preset': { preset: string }
  }
}
declare module '@deepseek-ai/cordis' {
  interface Context { presets: PresetService }
  interface Events { 'presets/changed'(session: Session, preset: AgentPreset): void }
}

export interface PresetServiceOptions {
  /** The preset of a session that never chose one. */
  default: string
  /** Directory of user presets (`$DSH_HOME/presets`); read once at startup. */
  dir?: string | undefined
}

/**
 * `ctx.presets`: the agent preset roster (shipped, then user files, which may replace a
 * shipped id) and each session's choice, a logged fact. How a surface applies it:
 *
 *   const agent = ctx.agents.create(session, ctx.presets.agentOptions(ctx.presets.current(session)))
 *
 * Surface flags such as --model go on top. When resuming a session that already ran,
 * pass only `toolFilter`: its model choice is in the log (`model/select`, `request/header`)
 * and a preset model would override it. The persona reaches the prompt through the
 * `persona` section, which reads the session's preset itself.
 */
export class PresetService extends Service {
  private readonly byId = new Map<string, AgentPreset>()
  /** Sessions already warned about a logged preset that no longer exists. */
  private readonly warned = new Set<string>()
  /** Broken user preset files (each also reported through the logger). */
  readonly problems: PresetProblem[] = []
  readonly defaultId: string

  constructor(ctx: Context, options: PresetServiceOptions) {
    super(ctx, 'presets')
    for (const preset of SHIPPED_PRESETS) this.byId.set(preset.id, preset)
    const logger = ctx.logger('presets')
    if (options.dir) {
      const { presets, problems } = loadPresetDir(options.dir)
      for (const preset of presets) this.byId.set(preset.id, preset)
      for (const problem of problems) {
        this.problems.push(problem)
        logger.warn('skipped a broken agent preset: %s', problem.message)
      }
    }
    if (this.byId.has(options.default)) {
      this.defaultId = options.default
    } else {
      logger.warn('default agent preset "%s" is unknown; using "standard"', options.default)
      this.defaultId = 'standard'
    }
  }

  list(): AgentPreset[] {
    return [...this.byId.values()]
  }

  /** UNKNOWN_AGENT_PRESET listing the ids. */
  get(id: string): AgentPreset {
    const preset = this.byId.get(id)
    if (!preset) {
      throw new DshError('UNKNOWN_AGENT_PRESET', `unknown agent preset "${id}"`, { hint: `choose one of: ${[...this.byId.keys()].join(', ')}` })
    }
    return preset
  }

  /** The last `agent/preset` of the session, else the default (also when the logged one no longer exists). */
  current(session: Session): AgentPreset {
    const logged = session.last('agent/preset')?.data.preset
    if (logged !== undefined) {
      const preset = this.byId.get(logged)
      if (preset) return preset
      if (!this.warned.has(session.id)) {
        this.warned.add(session.id)
        this.ctx.logger('presets').warn('session %s uses agent preset "%s", which is no longer defined; using "%s"', session.id, logged, this.defaultId)
      }
    }
    return this.get(this.defaultId)
  }

  /**
   * Chooses the session's preset (logged `agent/preset`; a no-op when it is already the
   * logged choice). PRESET_LOCKED once the session has started a turn: the persona and
   * tool set of a conversation do not change under it.
   */
  set(session: Session, id: string): AgentPreset {
    const preset = this.get(id)
    if (session.last('agent/preset')?.data.preset === id) return preset
    if (session.last('turn/start')) {
      throw new DshError('PRESET_LOCKED', `the agent preset can only be chosen before the first turn (this session is "${this.current(session).id}")`, {
        hint: 'start a new session to use another preset',
      })
    }
    session.append('agent/preset', { preset: id })
    this.ctx.emit('presets/changed', session, preset)
    return preset
  }

  /** Agent options for the preset: every key present (undefined = the agent's default). */
  agentOptions(preset: AgentPreset): AgentOptions {
    return {
      toolFilter: preset.tools ? toolMatcher(preset.tools) : undefined,
      model: preset.model,
      provider: preset.provider,
      reasoningEffort: preset.reasoningEffort,
    }
  }
}
