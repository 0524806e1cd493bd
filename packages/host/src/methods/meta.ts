import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { writeSettings } from '@dsh/core'
import { DshError } from '@dsh/protocol'
import { describeRpc, PROTOCOL_VERSION } from '@dsh/host-api'
import type { Conn } from '../connection.js'
import { startingChoice } from '../defaults.js'
import type { HostCore } from '../core.js'
import type { In, Out } from './types.js'

export async function initialize(h: HostCore, conn: Conn, p: In<'initialize'>): Promise<Out<'initialize'>> {
  const declared = p.capabilities ?? {}
  conn.capabilities = {
    approvals: declared.approvals ?? conn.capabilities.approvals,
    questions: declared.questions ?? conn.capabilities.questions,
    tools: declared.tools ?? conn.capabilities.tools,
  }
  return {
    protocolVersion: PROTOCOL_VERSION,
    server: { name: 'dsh', version: h.version },
    capabilities: { ...conn.capabilities, mcp: !!h.ctx.get('mcp'), worlds: ['local'] },
  }
}

function configured(h: HostCore, provider: { id: string; apiKeyEnv: string }): { configured: boolean; source: 'store' | 'env' | null } {
  const credentials = h.ctx.credentials
  if (credentials.providers().includes(provider.id)) return { configured: true, source: 'store' }
  return credentials.getApiKey(provider.id, provider.apiKeyEnv) ? { configured: true, source: 'env' } : { configured: false, source: null }
}

export async function describeHost(h: HostCore): Promise<Out<'host/describe'>> {
  const { ctx } = h
  const settings = ctx.settings.get()
  const providers = ctx.llm.listProviders()
  const presets = h.presets
  const choice = startingChoice(ctx, {}, presets ? presets.agentOptions(presets.get(presets.defaultId)) : {})
  const defaults = ctx.llm.defaults({ provider: choice.provider, model: choice.model })
  return {
    version: h.version,
    providers: providers.map((p) => ({ id: p.id, configured: configured(h, p).configured, models: p.models.map((m) => m.id) })),
    permissionModes: ctx.permission.presets().map((p) => ({ id: p.id, description: p.description })),
    agentPresets: presets ? presets.list().map((p) => ({ id: p.id, description: p.description })) : [],
    defaults: {
      provider: defaults.provider, model: defaults.model, reasoningEffort: choice.reasoningEffort ?? null,
      permissionMode: settings.permissionMode ?? ctx.permission.defaultId,
      agentPreset: presets?.defaultId ?? null,
    },
  }
}

export async function listModels(h: HostCore, _conn: Conn, p: In<'models/list'>): Promise<Out<'models/list'>> {
  const providers = p.provider ? [h.ctx.llm.provider(p.provider)] : h.ctx.llm.listProviders()
  return { models: providers.flatMap((pr) => pr.models.map((m) => ({ provider: pr.id, model: m.id, contextWindow: m.contextWindow ?? null, vision: m.vision ?? null }))) }
}

const SECRET_KEY = /key|token|secret|password|authorization/i

/** Settings as JSON with every secret-looking key's value replaced. */
function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact)
  if (!value || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_KEY.test(k) && typeof v === 'string' ? '<redacted>' : redact(v)]))
}

function revisionOf(file: string): string {
  const bytes = existsSync(file) ? readFileSync(file) : Buffer.alloc(0)
  return createHash('sha256').update(bytes).digest('hex').slice(0, 16)
}

export async function readSettingsMethod(h: HostCore): Promise<Out<'settings/read'>> {
  const service = h.ctx.settings
  if (service.error) throw service.error
  return { settings: redact(service.get()) as Record<string, never>, revision: revisionOf(service.file), file: service.file }
}

/** Optimistic: SETTINGS_CONFLICT when the file changed since `expectedRevision`. Values are checked like a flag would be. */
export async function updateSettings(h: HostCore, _conn: Conn, p: In<'settings/update'>): Promise<Out<'settings/update'>> {
  const { ctx } = h
  const service = ctx.settings
  service.reload()
  if (service.error) throw service.error
  const revision = revisionOf(service.file)
  if (p.expectedRevision !== undefined && p.expectedRevision !== revision) {
    throw new DshError('SETTINGS_CONFLICT', `${service.file} changed since revision ${p.expectedRevision} (now ${revision})`, { hint: 'read the settings again and reapply the change' })
  }
  if (p.set.provider) ctx.llm.provider(p.set.provider)
  if (p.set.permissionMode) ctx.permission.preset(p.set.permissionMode)
  const { version: _version, ...current } = service.get()
  writeSettings(service.file, { ...current, ...p.set })
  service.reload()
  return { settings: redact(service.get()) as Record<string, never>, revision: revisionOf(service.file) }
}

export async function describeCredentials(h: HostCore): Promise<Out<'credentials/describe'>> {
  return {
    providers: h.ctx.llm.listProviders().map((p) => ({ provider: p.id, ...configured(h, p), envVar: p.apiKeyEnv })),
  }
}

export async function setCredentials(h: HostCore, _conn: Conn, p: In<'credentials/set'>): Promise<Out<'credentials/set'>> {
  h.ctx.llm.provider(p.provider)
  h.ctx.credentials.set(p.provider, { apiKey: p.key })
  return {}
}

export async function unsetCredentials(h: HostCore, _conn: Conn, p: In<'credentials/unset'>): Promise<Out<'credentials/unset'>> {
  h.ctx.llm.provider(p.provider)
  h.ctx.credentials.remove(p.provider)
  return {}
}

export async function rpcDescribe(): Promise<Out<'rpc/describe'>> {
  return describeRpc()
}
