import { REASONING_EFFORTS } from '@dsh/protocol'
import type * as acp from '@agentclientprotocol/sdk/unstable'
import type { PermissionPreset, ReasoningEffort } from '@dsh/protocol'

/**
 * Session modes and config options, pure. Modes are the permission presets. Model
 * option ids are stable across changes of the default provider: the bare model id
 * when exactly one provider offers it, `provider::model` otherwise (a bare id is also
 * accepted on input when it names exactly one model).
 */
export interface ProviderModels { id: string; label: string; models: readonly { id: string }[] }

export const MODE_CONFIG_ID = 'mode'
export const MODEL_CONFIG_ID = 'model'
export const EFFORT_CONFIG_ID = 'reasoning_effort'
export const AGENT_CONFIG_ID = 'agent'

/** The reasoning efforts a session may choose (the values of protocol's `ReasoningEffort`). */

/** `default` leaves the effort to the provider. */
export { REASONING_EFFORTS }
export const EFFORT_VALUES: readonly (ReasoningEffort | 'default')[] = ['default', ...REASONING_EFFORTS]

export function modelValue(providers: readonly ProviderModels[], provider: string, model: string): string {
  const offering = providers.filter((p) => p.models.some((m) => m.id === model))
  return offering.length === 1 && offering[0]!.id === provider ? model : `${provider}::${model}`
}

/** The provider and model an option value names, or undefined. */
export function parseModelValue(providers: readonly ProviderModels[], value: string): { provider: string; model: string } | undefined {
  const sep = value.indexOf('::')
  if (sep > 0) {
    const provider = providers.find((p) => p.id === value.slice(0, sep))
    const model = value.slice(sep + 2)
    return provider?.models.some((m) => m.id === model) ? { provider: provider.id, model } : undefined
  }
  const offering = providers.filter((p) => p.models.some((m) => m.id === value))
  return offering.length === 1 ? { provider: offering[0]!.id, model: value } : undefined
}

export function modeState(presets: readonly PermissionPreset[], current: string): acp.SessionModeState {
  return { currentModeId: current, availableModes: presets.map((p) => ({ id: p.id, name: p.id, description: p.description })) }
}

export interface ConfigState {
  presets: readonly PermissionPreset[]
  mode: string
  providers: readonly ProviderModels[]
  provider: string
  model: string
  effort: ReasoningEffort | undefined
  /** Agent presets, when the composition mounts them. */
  agents?: { list: readonly { id: string; description?: string }[]; current: string }
}

export function configOptions(state: ConfigState): acp.SessionConfigOption[] {
  const models = state.providers.flatMap((p) => p.models.map((m) => ({ value: modelValue(state.providers, p.id, m.id), name: `${m.id} (${p.label})` })))
  const current = modelValue(state.providers, state.provider, state.model)
  if (!models.some((m) => m.value === current)) models.push({ value: current, name: `${state.model} (${state.provider})` })
  const options: acp.SessionConfigOption[] = [
    {
      id: MODE_CONFIG_ID, name: 'Permission mode', category: 'mode', type: 'select', currentValue: state.mode,
      options: state.presets.map((p) => ({ value: p.id, name: p.id, description: p.description })),
    },
    { id: MODEL_CONFIG_ID, name: 'Model', category: 'model', type: 'select', currentValue: current, options: models },
    {
      id: EFFORT_CONFIG_ID, name: 'Reasoning effort', category: 'thought_level', type: 'select', currentValue: state.effort ?? 'default',
      options: EFFORT_VALUES.map((v) => ({ value: v, name: v === 'default' ? 'provider default' : v })),
    },
  ]
  if (state.agents) {
    options.push({
      id: AGENT_CONFIG_ID, name: 'Agent preset', type: 'select', currentValue: state.agents.current,
      options: state.agents.list.map((a) => ({ value: a.id, name: a.id, ...(a.description ? { description: a.description } : {}) })),
    })
  }
  return options
}
