import { Service, type Context } from '@deepseek-ai/cordis'
import { DshError, type GenerateRequest, type LlmAdapter, type ProviderEndpoint, type StreamChunk } from '@dsh/protocol'
import { BUILTIN_PROVIDERS, DEFAULT_CONTEXT_WINDOW, type ModelInfo, type ProviderInfo } from './providers.js'

declare module '@deepseek-ai/cordis' {
  interface Context { llm: LlmService }
  interface Events {
    /** Waterfall around the adapter call (replay, recording, fault injection). */
    'llm/stream'(request: GenerateRequest, endpoint: ProviderEndpoint, next: () => AsyncIterable<StreamChunk>): AsyncIterable<StreamChunk>
  }
}

export interface LlmConfig {
  provider?: string | undefined
  model?: string | undefined
  idleTimeoutMs?: number | undefined
  providers?: ProviderInfo[] | undefined
}

/** Looks up a key for a provider: the credentials file first, then the environment. */
export type KeyLookup = (provider: string, envVar: string) => string | undefined

/**
 * `ctx.llm`: adapters by protocol, the provider catalogue, endpoint resolution with
 * credentials, and `stream()` — one provider attempt through the `llm/stream` waterfall.
 */
export class LlmService extends Service {
  private readonly adapters = new Map<string, LlmAdapter>()
  private readonly providers = new Map<string, ProviderInfo>()

  constructor(ctx: Context, private readonly config: LlmConfig, private readonly keys: KeyLookup) {
    super(ctx, 'llm')
    for (const provider of [...BUILTIN_PROVIDERS, ...(config.providers ?? [])]) this.providers.set(provider.id, provider)
  }

  registerAdapter(adapter: LlmAdapter): () => void {
    this.adapters.set(adapter.protocol, adapter)
    return () => {
      if (this.adapters.get(adapter.protocol) === adapter) this.adapters.delete(adapter.protocol)
    }
  }

  registerProvider(provider: ProviderInfo): () => void {
    const previous = this.providers.get(provider.id)
    this.providers.set(provider.id, provider)
    return () => {
      if (previous) this.providers.set(provider.id, previous)
      else this.providers.delete(provider.id)
    }
  }

  provider(id: string): ProviderInfo {
    const provider = this.providers.get(id)
    if (!provider) {
      throw new DshError('UNKNOWN_PROVIDER', `unknown provider "${id}"`, { hint: `known providers: ${[...this.providers.keys()].join(', ')}` })
    }
    return provider
  }

  listProviders(): ProviderInfo[] {
    return [...this.providers.values()]
  }

  /** The default provider and model (row config, else deepseek). */
  defaults(overrides: { provider?: string | undefined; model?: string | undefined } = {}): { provider: string; model: string } {
    const provider = overrides.provider ?? this.config.provider ?? 'deepseek'
    const model = overrides.model ?? (provider === (this.config.provider ?? 'deepseek') ? this.config.model : undefined)
    return { provider, model: model ?? this.provider(provider).defaultModel }
  }

  modelInfo(providerId: string, model: string): ModelInfo {
    const provider = this.providers.get(providerId)
    return provider?.models.find((m) => m.id === model) ?? { id: model, contextWindow: DEFAULT_CONTEXT_WINDOW }
  }

  /** The endpoint with its key, or NO_CREDENTIALS saying how to provide one. Never includes the key in errors. */
  resolve(providerId: string): ProviderEndpoint {
    const provider = this.provider(providerId)
    const apiKey = this.keys(provider.id, provider.apiKeyEnv)
    if (!apiKey) {
      throw new DshError('NO_CREDENTIALS', `no API key for provider "${provider.id}"`, {
        hint: `run \`dsh login --provider ${provider.id}\` or set ${provider.apiKeyEnv}`,
      })
    }
    const baseUrl = (provider.baseUrlEnv && process.env[provider.baseUrlEnv]) || provider.baseUrl
    if (!this.adapters.has(provider.protocol)) {
      throw new DshError('NO_ADAPTER', `no adapter for protocol "${provider.protocol}" (provider "${provider.id}") is mounted`)
    }
    return {
      id: provider.id, protocol: provider.protocol, baseUrl, apiKey,
      ...(this.config.idleTimeoutMs ? { idleTimeoutMs: this.config.idleTimeoutMs } : {}),
    }
  }

  /** One provider attempt. Failures arrive as `finish {reason: 'error'}`, never as a throw. */
  stream(request: GenerateRequest, endpoint: ProviderEndpoint): AsyncIterable<StreamChunk> {
    const adapter = this.adapters.get(endpoint.protocol)
    return this.ctx.waterfall('llm/stream', request, endpoint, () => {
      if (!adapter) throw new DshError('NO_ADAPTER', `no adapter for protocol "${endpoint.protocol}"`)
      return adapter.stream(request, endpoint)
    })
  }
}
