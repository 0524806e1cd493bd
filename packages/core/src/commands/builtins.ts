import type { Context } from '@deepseek-ai/cordis'
import { DshError, type ModelConfig } from '@dsh/protocol'
import type { ProviderInfo } from '../llm/providers.js'
import type { PlanMode } from '../plan/service.js'
import type { PresetService } from '../presets/service.js'
import { latestTitle } from '../session/memory.js'
import type { CommandSpec } from './registry.js'
import { contextUse, formatStatus } from './status.js'

/** A model choice resolved against the catalogue (pure). */
export type ModelChoice = { provider: string; model: string; catalogued: boolean }

/**
 * Resolves `/model` input: `provider:id` (any id of a known provider; ids outside the
 * catalogue are allowed there, for custom deployments) or a bare catalogued `id` (the
 * current provider wins when several offer it). Throws UNKNOWN_MODEL listing the choices.
 */
export function resolveModelChoice(input: string, providers: readonly ProviderInfo[], currentProvider: string): ModelChoice {
  const colon = input.indexOf(':')
  const prefix = colon > 0 ? providers.find((p) => p.id === input.slice(0, colon)) : undefined
  if (prefix) {
    const model = input.slice(colon + 1).trim()
    if (!model) throw new DshError('UNKNOWN_MODEL', `no model id after "${prefix.id}:"`, { hint: `e.g. /model ${prefix.id}:${prefix.defaultModel}` })
    return { provider: prefix.id, model, catalogued: prefix.models.some((m) => m.id === model) }
  }
  const offering = providers.filter((p) => p.models.some((m) => m.id === input))
  const chosen = offering.find((p) => p.id === currentProvider) ?? offering[0]
  if (chosen) return { provider: chosen.id, model: input, catalogued: true }
  throw new DshError('UNKNOWN_MODEL', `unknown model "${input}"`, {
    hint: `choose one of: ${providers.flatMap((p) => p.models.map((m) => `${p.id}:${m.id}`)).join(', ')} (or provider:id for a model outside the catalogue)`,
  })
}

/** The `/model` listing with the current model marked `*` (pure). */
export function formatModelList(providers: readonly ProviderInfo[], current: { provider: string; model: string }): string {
  const lines = ['Models (* = current):']
  for (const p of providers) {
    const models = p.models.map((m) => (p.id === current.provider && m.id === current.model ? `${m.id} *` : m.id))
    lines.push(`  ${p.id} (${p.label}): ${models.join(', ') || '(none listed)'}`)
  }
  const listed = providers.some((p) => p.id === current.provider && p.models.some((m) => m.id === current.model))
  if (!listed) lines.push(`  current: ${current.provider}:${current.model} *`)
  lines.push('Switch with /model <id> or /model <provider>:<id>.')
  return lines.join('\n')
}

/** `/status`: model, presets, context use, session id and title. Never sends a request. */
export function statusCommand(ctx: Context): CommandSpec {
  return {
    name: 'status', description: 'Show the model, agent and permission presets, context use and session', source: 'builtin',
    async run({ session, agent }) {
      const config: ModelConfig = agent.modelConfig()
      // the window compaction works against, when it is mounted (it may be configured smaller)
      const compaction = ctx.get('compaction') as { window(agent: unknown): number } | undefined
      const window = compaction?.window(agent) ?? ctx.llm.modelInfo(config.provider, config.model).contextWindow
      // optional neighbours: shown when mounted
      const presets = ctx.get('presets') as PresetService | undefined
      const plan = ctx.get('plan') as PlanMode | undefined
      const mcp = ctx.get('mcp') as { statusLines(sessionId: string): string[] } | undefined
      const worlds = ctx.get('worlds') as { describe(session: unknown): string | undefined } | undefined
      return {
        reply: formatStatus({
          sessionId: session.id, title: latestTitle(session.events), cwd: session.cwd,
          provider: config.provider, model: config.model, reasoningEffort: config.reasoningEffort,
          agentPreset: presets?.current(session).id,
          permissionPreset: ctx.permission.current(session).id,
          planMode: plan?.active(session),
          world: worlds?.describe(session),
          context: contextUse(session.events, session.deriveMessages(), window),
          mcp: mcp?.statusLines(session.id),
        }),
      }
    },
  }
}

/** `/model [id | provider:id]`: lists the catalogue, or switches (logged as `model/select`). */
export function modelCommand(ctx: Context): CommandSpec {
  return {
    name: 'model', description: 'List models, or switch the model for the next request', argumentHint: '[id | provider:id]', source: 'builtin',
    async run({ agent, args }) {
      const providers = ctx.llm.listProviders()
      const current = agent.modelConfig()
      if (!args) return { reply: formatModelList(providers, current) }
      const choice = resolveModelChoice(args, providers, current.provider)
      const config = agent.setModel({ provider: choice.provider, model: choice.model })
      const note = choice.catalogued ? '' : ` (not in the catalogue: context window assumed ${ctx.llm.modelInfo(config.provider, config.model).contextWindow} tokens)`
      return { reply: `Model: ${config.provider}:${config.model}${note}.` }
    },
  }
}

/** `/permission [preset]`: lists the permission presets, or switches (logged as `permission/preset`). */
export function permissionCommand(ctx: Context): CommandSpec {
  return {
    name: 'permission', description: 'List permission presets, or switch this session to one', argumentHint: '[preset]', source: 'builtin',
    async run({ session, args }) {
      const current = ctx.permission.current(session)
      if (!args) {
        const lines = ctx.permission.presets().map((p) => `  ${p.id}${p.id === current.id ? ' *' : ''} — ${p.description}`)
        return { reply: ['Permission presets (* = current):', ...lines, 'Switch with /permission <preset>.'].join('\n') }
      }
      const preset = ctx.permission.set(session, args)
      return { reply: `Permission preset: ${preset.id} (sandbox ${preset.sandbox}, approval ${preset.approval}).` }
    },
  }
}

/** `/clear`: asks the surface for a new session in the same workspace (`newSession`). */
export function clearCommand(): CommandSpec {
  return {
    name: 'clear', description: 'Start a new session in the same workspace', source: 'builtin',
    async run({ session }) {
      return { reply: `Starting a new session in ${session.cwd} (session ${session.id} stays saved).`, newSession: true }
    },
  }
}
