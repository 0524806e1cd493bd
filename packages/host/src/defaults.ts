import { startingModel, type AgentOptions, type StartingModel } from '@dsh/core'
import { REASONING_EFFORTS, type ReasoningEffort } from '@dsh/protocol'
import type { Context } from '@deepseek-ai/cordis'

/** settings.yaml's effort, when it names a known one. */
export const effortOf = (value: string | undefined): ReasoningEffort | undefined =>
  (value && (REASONING_EFFORTS as readonly string[]).includes(value) ? value as ReasoningEffort : undefined)

/**
 * The model a new session starts with (the one rule, for every surface): an explicit
 * param, else the agent preset, else settings.yaml; a model only travels with its
 * provider; the provider is always named (the llm row's default when nobody chose).
 */
export function startingChoice(ctx: Context, explicit: StartingModel, preset: AgentOptions): StartingModel & { provider: string } {
  const settings = ctx.settings.get()
  const choice = startingModel(explicit, preset, { provider: settings.provider, model: settings.model, reasoningEffort: effortOf(settings.reasoningEffort) })
  return { ...choice, provider: ctx.llm.defaults({ provider: choice.provider }).provider }
}
