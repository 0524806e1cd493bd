import type * as acp from '@agentclientprotocol/sdk/unstable'
import { envVarFor } from '@dsh/core'
import { isDshError, type GenerateRequest, type ProviderEndpoint, type StreamChunk } from '@dsh/protocol'
import type { AcpConnection } from './connection.js'
import { browserLogin } from './browser-login.js'
import { authRequired, invalidParams } from './errors.js'
import { defaultProvider } from './defaults.js'
import { quote } from './quote.js'

/**
 * Authentication. Keys never cross ACP except the `api-key` method's own `_meta`, and
 * never land in editor settings: every method stores into the harness credential store
 * (`$DSH_HOME/.credentials.yaml`, 0600) shared with every dsh surface.
 * - `api-key` (always): `authenticate {methodId: 'api-key', _meta: {'api-key': {apiKey, provider?}}}`.
 * - `terminal` (client declared `auth.terminal`): the client runs this agent with `login`.
 * - `browser` (client declared URL elicitation): a one-time page on 127.0.0.1 takes the key.
 * - `gateway` (client declared `auth._meta.gateway === true`): an OpenAI-compatible endpoint
 *   `_meta.gateway {baseUrl, headers?, apiKey?, providerName?, model?}` for this connection.
 */
export function authMethods(b: AcpConnection): acp.AuthMethod[] {
  const caps = b.caps
  const provider = defaultProvider(b)
  const methods: acp.AuthMethod[] = [{
    id: 'api-key', name: 'API key',
    description: `Send the ${provider} key in _meta["api-key"].apiKey (and .provider for another provider); dsh stores it in $DSH_HOME/.credentials.yaml.`,
    _meta: { 'api-key': { provider } },
  }]
  if (caps.auth?.terminal === true) {
    methods.push({ type: 'terminal', id: 'terminal', name: 'Log in in a terminal', description: 'Type the API key (not echoed); it is stored in $DSH_HOME/.credentials.yaml.', args: ['login'] })
  }
  if (caps.elicitation?.url) {
    methods.push({ id: 'browser', name: 'Log in in a browser', description: 'Opens a one-time page on 127.0.0.1 where you paste the key; it never passes through the editor.' })
  }
  if ((caps.auth?._meta as { gateway?: unknown } | null | undefined)?.gateway === true) {
    methods.push({ id: 'gateway', name: 'Custom gateway', description: 'An OpenAI-compatible endpoint: _meta.gateway = {baseUrl, headers?, apiKey?, providerName?, model?}.' })
  }
  return methods
}

/** NO_CREDENTIALS → -32000 with the auth methods (after re-reading the credential file once). */
export function requireCredentials(b: AcpConnection, provider: string): void {
  try {
    b.ctx.llm.resolve(provider)
    return
  } catch (error) {
    if (!isDshError(error, 'NO_CREDENTIALS')) throw error
  }
  b.ctx.credentials.reload()
  try {
    b.ctx.llm.resolve(provider)
  } catch (error) {
    if (!isDshError(error, 'NO_CREDENTIALS')) throw error
    throw authRequired(error.message, authMethods(b), provider)
  }
}

function hasKey(b: AcpConnection, provider: string): boolean {
  try {
    requireCredentials(b, provider)
    return true
  } catch {
    return false
  }
}

const PROVIDER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

function knownProvider(b: AcpConnection, provider: unknown): string {
  if (typeof provider !== 'string' || !provider) throw invalidParams('provider must be a non-empty string')
  try {
    return b.ctx.llm.provider(provider).id
  } catch (error) {
    throw invalidParams(error instanceof Error ? error.message : String(error))
  }
}

export async function authenticate(b: AcpConnection, p: acp.AuthenticateRequest, request: { requestId: acp.JsonRpcId; signal: AbortSignal }): Promise<acp.AuthenticateResponse> {
  const meta = (p._meta ?? {}) as Record<string, unknown>
  const advertised = authMethods(b)
  if (!advertised.some((m) => m.id === p.methodId)) throw invalidParams(`unknown auth method ${quote(p.methodId)} (offered: ${advertised.map((m) => m.id).join(', ')})`)
  switch (p.methodId) {
    case 'api-key': {
      const given = (meta['api-key'] ?? {}) as { apiKey?: unknown; provider?: unknown }
      const provider = knownProvider(b, given.provider ?? meta.provider ?? defaultProvider(b))
      if (given.apiKey !== undefined) {
        if (typeof given.apiKey !== 'string' || !given.apiKey.trim() || /\s/.test(given.apiKey.trim())) throw invalidParams('_meta["api-key"].apiKey must be one non-empty word')
        b.ctx.credentials.set(provider, { apiKey: given.apiKey.trim() })
        return {}
      }
      if (hasKey(b, provider)) return {}
      throw authRequired(`no API key for ${provider}: send it in _meta["api-key"].apiKey`, advertised, provider)
    }
    case 'terminal': {
      const provider = defaultProvider(b)
      if (hasKey(b, provider)) return {}
      throw authRequired(`no API key for ${provider} yet: complete the terminal login first`, advertised, provider)
    }
    case 'browser': {
      const provider = knownProvider(b, meta.provider ?? defaultProvider(b))
      await browserLogin(b, provider, request.requestId, request.signal, advertised)
      return {}
    }
    case 'gateway':
      gateway(b, meta.gateway)
      return {}
  }
  throw invalidParams(`unknown auth method ${quote(p.methodId)}`)
}

/** Registers the client's gateway as a provider for this connection and stores its key. */
function gateway(b: AcpConnection, raw: unknown): void {
  const g = (raw ?? {}) as { baseUrl?: unknown; headers?: unknown; apiKey?: unknown; providerName?: unknown; model?: unknown }
  let url: URL
  try {
    url = new URL(String(g.baseUrl))
  } catch {
    throw invalidParams('_meta.gateway.baseUrl must be an http(s) URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidParams('_meta.gateway.baseUrl must be an http(s) URL')
  const id = g.providerName === undefined ? 'gateway' : String(g.providerName)
  if (!PROVIDER_ID.test(id)) throw invalidParams('_meta.gateway.providerName must be letters, digits, ".", "_" or "-"')
  const headers: Record<string, string> = {}
  if (g.headers !== undefined) {
    if (typeof g.headers !== 'object' || g.headers === null) throw invalidParams('_meta.gateway.headers must be an object of strings')
    for (const [key, value] of Object.entries(g.headers)) {
      if (typeof value !== 'string') throw invalidParams(`_meta.gateway.headers.${key} must be a string`)
      headers[key.toLowerCase()] = value
    }
  }
  const bearer = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '')?.[1]
  delete headers.authorization
  const apiKey = typeof g.apiKey === 'string' && g.apiKey ? g.apiKey : bearer ?? 'gateway'
  const model = typeof g.model === 'string' && g.model ? g.model : b.options.defaults.model ?? b.ctx.settings.get().model
  if (!model) throw invalidParams('_meta.gateway.model is required (no default model is configured)')
  b.own(b.ctx.llm.registerProvider({
    id, label: `Gateway (${url.host})`, protocol: 'openai', baseUrl: url.href.replace(/\/$/, ''), apiKeyEnv: envVarFor(id, 'API_KEY'),
    defaultModel: model, models: [{ id: model, contextWindow: 128_000 }],
  }))
  if (Object.keys(headers).length) {
    b.own(b.ctx.on('llm/stream', (_request: GenerateRequest, endpoint: ProviderEndpoint, next: () => AsyncIterable<StreamChunk>) => {
      if (endpoint.id === id) endpoint.headers = { ...endpoint.headers, ...headers }
      return next()
    }))
  }
  b.ctx.credentials.set(id, { apiKey, baseUrl: url.href })
  b.providerOverride = id
}

/** `logout`: forgets one provider's stored key (`_meta.provider`, default: this connection's provider). */
export function logout(b: AcpConnection, p: acp.LogoutRequest): acp.LogoutResponse {
  const provider = (p._meta as { provider?: unknown } | null | undefined)?.provider ?? defaultProvider(b)
  if (typeof provider !== 'string' || !provider) throw invalidParams('_meta.provider must be a non-empty string')
  b.ctx.credentials.remove(provider)
  if (b.providerOverride === provider) b.providerOverride = undefined
  return {}
}
