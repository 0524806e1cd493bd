import type { ReasoningEffort } from '@dsh/protocol'
import type { AgentOptions } from '../agent/types.js'

export interface StartingModel {
  provider?: string | undefined
  model?: string | undefined
  reasoningEffort?: ReasoningEffort | undefined
}

/**
 * The model a new session starts with, the same on every surface. A flag (or DSH_*) wins,
 * then the agent preset, then settings.yaml. A model id only travels with its provider: a
 * preset's or the settings' model is dropped when a different provider was chosen above it.
 * Pure.
 */
export function startingModel(flags: StartingModel, preset: AgentOptions, settings: StartingModel): StartingModel {
  const provider = flags.provider ?? preset.provider ?? settings.provider
  // a layer's model applies only if no layer above it chose another provider
  const above = (chosen: string | undefined, own: string | undefined) => chosen === undefined || chosen === own
  const presetModel = preset.model && above(flags.provider, preset.provider) ? preset.model : undefined
  const settingsModel = settings.model && above(flags.provider ?? preset.provider, settings.provider) ? settings.model : undefined
  const model = flags.model ?? presetModel ?? settingsModel
  const reasoningEffort = flags.reasoningEffort ?? preset.reasoningEffort ?? settings.reasoningEffort
  return {
    ...(provider ? { provider } : {}),
    ...(model ? { model } : {}),
    ...(reasoningEffort ? { reasoningEffort } : {}),
  }
}
