import { parseArgs } from 'node:util'
import { DshError, PERMISSION_PRESETS, type ReasoningEffort } from '@dsh/protocol'
import { REASONING_EFFORTS } from './config.js'

/** Per-process session defaults of the ACP surface. Flags win over `DSH_*` env, which wins over settings. */
export interface AcpDefaults {
  provider?: string | undefined
  model?: string | undefined
  maxTokens?: number | undefined
  permissionMode?: string | undefined
  reasoningEffort?: ReasoningEffort | undefined
}

export type AcpCommand = { type: 'serve'; defaults: AcpDefaults } | { type: 'login'; provider?: string } | { type: 'help' }

export const ACP_USAGE = `usage: dsh --profile acp [options]      (or: dsh-acp [options])
       dsh --profile acp login [--provider P]   store an API key (also: dsh-acp login)

Speaks the Agent Client Protocol (JSON-RPC, NDJSON) on stdin/stdout; logs go to stderr.

options (environment variable in brackets):
  --provider P            provider route [DSH_PROVIDER]
  --model M               model id [DSH_MODEL]
  --max-tokens N          output token limit per request [DSH_MAX_TOKENS]
  --permission-mode MODE  ${PERMISSION_PRESETS.map((p) => p.id).join(' | ')} [DSH_PERMISSION_MODE]
  --reasoning-effort E    off | low | medium | high | max [DSH_REASONING_EFFORT]

DSH_ACP_DEBUG=1 logs every JSON-RPC frame (method, id) on stderr.`

const EFFORTS: readonly string[] = REASONING_EFFORTS

function usage(message: string): DshError {
  return new DshError('USAGE', message, { hint: 'run `dsh-acp --help` (or `dsh --profile acp -- --help`)' })
}

/** Parses the surface's argv and environment. USAGE errors name the flag or variable. */
export function parseAcpArgs(argv: readonly string[], env: Record<string, string | undefined>): AcpCommand {
  if (argv[0] === 'login') {
    const rest = argv.slice(1)
    let provider: string | undefined
    for (let i = 0; i < rest.length; i++) {
      const token = rest[i]!
      if (token === '--provider') provider = rest[++i]
      else if (token.startsWith('--provider=')) provider = token.slice('--provider='.length)
      else throw usage(`unknown argument ${JSON.stringify(token)} for login`)
      if (!provider) throw usage('--provider needs a provider name')
    }
    return { type: 'login', ...(provider ? { provider } : {}) }
  }
  let values
  try {
    values = parseArgs({
      args: [...argv], allowPositionals: false, strict: true,
      options: {
        provider: { type: 'string' }, model: { type: 'string' }, 'max-tokens': { type: 'string' },
        'permission-mode': { type: 'string' }, 'reasoning-effort': { type: 'string' }, help: { type: 'boolean', short: 'h' },
      },
    }).values
  } catch (error) {
    throw usage((error as Error).message)
  }
  if (values.help) return { type: 'help' }
  const pick = (flag: string | undefined, name: string) => flag ?? (env[name] || undefined)
  const defaults: AcpDefaults = {}
  const provider = pick(values.provider, 'DSH_PROVIDER')
  if (provider) defaults.provider = provider
  const model = pick(values.model, 'DSH_MODEL')
  if (model) defaults.model = model
  const maxTokens = pick(values['max-tokens'], 'DSH_MAX_TOKENS')
  if (maxTokens !== undefined) {
    const n = Number(maxTokens)
    if (!Number.isInteger(n) || n <= 0) throw usage(`--max-tokens (DSH_MAX_TOKENS) must be a positive integer, got ${JSON.stringify(maxTokens)}`)
    defaults.maxTokens = n
  }
  const mode = pick(values['permission-mode'], 'DSH_PERMISSION_MODE')
  if (mode !== undefined) {
    if (!PERMISSION_PRESETS.some((p) => p.id === mode)) throw usage(`--permission-mode (DSH_PERMISSION_MODE) must be one of ${PERMISSION_PRESETS.map((p) => p.id).join(', ')}, got ${JSON.stringify(mode)}`)
    defaults.permissionMode = mode
  }
  const effort = pick(values['reasoning-effort'], 'DSH_REASONING_EFFORT')
  if (effort !== undefined) {
    if (!EFFORTS.includes(effort)) throw usage(`--reasoning-effort (DSH_REASONING_EFFORT) must be one of ${EFFORTS.join(', ')}, got ${JSON.stringify(effort)}`)
    defaults.reasoningEffort = effort as ReasoningEffort
  }
  return { type: 'serve', defaults }
}
