import { startingModel, type AgentOptions, type Session } from '@dsh/core'
import type { ReasoningEffort } from '@dsh/protocol'
import { REASONING_EFFORTS } from './config.js'
import type { AcpConnection } from './connection.js'

const EFFORTS = new Set<string>(REASONING_EFFORTS)
const effortOf = (value: string | undefined) => (value && EFFORTS.has(value) ? value as ReasoningEffort : undefined)

/**
 * Agent options for a session: the agent preset's, then the process defaults (flags,
 * env) — and for a new session the product settings. A stored session keeps the model
 * it logged unless a flag says otherwise.
 */
export function agentOptions(b: AcpConnection, session: Session | undefined, fresh: boolean): AgentOptions {
  const d = b.options.defaults
  const presets = b.ctx.get('presets')
  const preset: AgentOptions = presets ? presets.agentOptions(session ? presets.current(session) : presets.get(presets.defaultId)) : {}
  if (!fresh) return { toolFilter: preset.toolFilter, provider: d.provider, model: d.model, maxTokens: d.maxTokens, reasoningEffort: d.reasoningEffort }
  const settings = b.ctx.settings.get()
  const choice = startingModel({ provider: b.providerOverride ?? d.provider, model: d.model, reasoningEffort: d.reasoningEffort }, preset,
    { provider: settings.provider, model: settings.model, reasoningEffort: effortOf(settings.reasoningEffort) })
  return { toolFilter: preset.toolFilter, ...choice, maxTokens: d.maxTokens }
}

/** The provider a new session of this connection uses. */
export function defaultProvider(b: AcpConnection): string {
  return b.ctx.llm.defaults({ provider: agentOptions(b, undefined, true).provider }).provider
}
