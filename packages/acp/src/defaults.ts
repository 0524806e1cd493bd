import type { AgentOptions, Session } from '@dsh/core'
import { DshError } from '@dsh/protocol'
import { startingChoice } from '@dsh/host'
import type { AcpConnection } from './connection.js'

/**
 * Agent options for a session. A new session's model follows the host's one rule
 * (`startingChoice`: flag → agent preset → settings.yaml; a model only travels with its
 * provider), the same as headless and the SDK. A stored session keeps the model it
 * logged unless a flag says otherwise.
 */
export function agentOptions(b: AcpConnection, session: Session | undefined, fresh: boolean): AgentOptions {
  const d = b.options.defaults
  const presets = b.ctx.get('presets')
  const preset: AgentOptions = presets ? presets.agentOptions(session ? presets.current(session) : presets.get(presets.defaultId)) : {}
  if (!fresh) return { toolFilter: preset.toolFilter, provider: d.provider, model: d.model, maxTokens: d.maxTokens, reasoningEffort: d.reasoningEffort }
  const choice = startingChoice(b.ctx, { provider: b.providerOverride ?? d.provider, model: d.model, reasoningEffort: d.reasoningEffort }, preset)
  return { toolFilter: preset.toolFilter, ...choice, maxTokens: d.maxTokens }
}

/** The provider a new session of this connection uses. */
export function defaultProvider(b: AcpConnection): string {
  return startingChoice(b.ctx, { provider: b.providerOverride ?? b.options.defaults.provider }, {}).provider
}

/**
 * The permission preset of a new session and the host's creation-time check: explicit, a flag,
 * else settings.yaml, else the permission row's default; a settings value that names no
 * preset is INVALID_SETTING, and the preset must accept the workspace (UNSAFE_WORKSPACE,
 * e.g. "/" under workspace-write) — refused before anything exists, as in headless.
 */
export function newSessionMode(b: AcpConnection, cwd: string, explicit?: string): string {
  const { permission, settings } = b.ctx
  const flag = explicit ?? b.options.defaults.permissionMode
  const mode = flag ?? settings.get().permissionMode ?? permission.defaultId
  try {
    permission.preset(mode)
  } catch (error) {
    if (flag) throw error
    throw new DshError('INVALID_SETTING', `settings.yaml: permissionMode "${mode}" is not a permission preset`, { cause: error, hint: 'fix permissionMode in settings.yaml (read-only, workspace-write, danger-full-access)' })
  }
  permission.checkWorkspace(mode, cwd)
  return mode
}
