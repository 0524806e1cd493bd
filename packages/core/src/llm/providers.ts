/** Built-in provider catalogue. Rows may add providers and models by config. */
export interface ModelInfo {
  id: string
  contextWindow: number
  maxOutput?: number
  reasoning?: boolean
  /** Whether the model accepts images; a surface refuses an image for a model marked false. */
  vision?: boolean
}

export interface ProviderInfo {
  id: string
  label: string
  /** Adapter protocol: 'openai' or 'anthropic'. */
  protocol: string
  baseUrl: string
  /** Environment variable holding the key (after the credentials file). */
  apiKeyEnv: string
  /** Environment variable overriding the base URL. */
  baseUrlEnv?: string
  defaultModel: string
  models: ModelInfo[]
}

export const BUILTIN_PROVIDERS: ProviderInfo[] = [
  {
    id: 'deepseek', label: 'DeepSeek', protocol: 'openai', baseUrl: 'https://api.deepseek.com',
    apiKeyEnv: 'DEEPSEEK_API_KEY', baseUrlEnv: 'DEEPSEEK_BASE_URL', defaultModel: 'deepseek-chat',
    models: [
      { id: 'deepseek-chat', contextWindow: 128_000, maxOutput: 8_192, vision: false },
      { id: 'deepseek-reasoner', contextWindow: 128_000, maxOutput: 32_768, reasoning: true, vision: false },
    ],
  },
  {
    id: 'openai', label: 'OpenAI-compatible', protocol: 'openai', baseUrl: 'https://api.openai.com/v1',
    apiKeyEnv: 'OPENAI_API_KEY', baseUrlEnv: 'OPENAI_BASE_URL', defaultModel: 'gpt-4.1',
    models: [
      { id: 'gpt-4.1', contextWindow: 1_000_000, maxOutput: 32_768, vision: true },
      { id: 'gpt-4.1-mini', contextWindow: 1_000_000, maxOutput: 32_768, vision: true },
    ],
  },
  {
    id: 'anthropic', label: 'Anthropic', protocol: 'anthropic', baseUrl: 'https://api.anthropic.com',
    apiKeyEnv: 'ANTHROPIC_API_KEY', baseUrlEnv: 'ANTHROPIC_BASE_URL', defaultModel: 'claude-sonnet-4-5',
    models: [
      { id: 'claude-sonnet-4-5', contextWindow: 200_000, maxOutput: 64_000, reasoning: true, vision: true },
      { id: 'claude-opus-4-1', contextWindow: 200_000, maxOutput: 32_000, reasoning: true, vision: true },
      { id: 'claude-haiku-4-5', contextWindow: 200_000, maxOutput: 64_000, vision: true },
    ],
  },
]

/** Context window assumed for a model the catalogue does not know. */
export const DEFAULT_CONTEXT_WINDOW = 128_000
