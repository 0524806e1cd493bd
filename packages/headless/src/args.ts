import { parseArgs } from 'node:util'
import { DshError, PERMISSION_PRESETS, REASONING_EFFORTS, type ReasoningEffort } from '@dsh/protocol'

export interface HeadlessArgs {
  task: string | undefined
  fromStdin: boolean
  provider?: string
  model?: string
  resume?: string
  json: boolean
  permissionMode?: string
  maxTokens?: number
  reasoningEffort?: ReasoningEffort
  /** Agent preset for a new session (standard, code, minimal or a user preset). */
  agent?: string
  /** An execution world `ssh://USER@HOST[:PORT]/ROOT` (with its key files), for a new session. */
  world?: string
  identity?: string
  knownHosts?: string
  help: boolean
}

export const HEADLESS_USAGE = `usage: dsh --profile headless [options] "TASK"   (TASK "-" reads it from stdin)

options:
  --provider P            provider (deepseek, openai, anthropic)
  --model M               model id
  --resume ID             continue a stored session
  --json                  stream session events as NDJSON on stdout
  --permission-mode MODE  read-only | workspace-write | danger-full-access
  --max-tokens N          output token limit per request
  --reasoning-effort E    off | low | medium | high | max
  (DSH_PROVIDER, DSH_MODEL, DSH_PERMISSION_MODE, DSH_MAX_TOKENS and DSH_REASONING_EFFORT
   set the same defaults; a flag wins)
  --agent PRESET          agent preset: standard | code | minimal | a user preset
  --world ssh://USER@HOST[:PORT]/ROOT   run the tools on that machine, in ROOT
  --identity FILE         private key for --world (default ~/.ssh/id_ed25519)
  --known-hosts FILE      known_hosts pinning the host key (default ~/.ssh/known_hosts)

A TASK like "/status" runs that slash command (/model, /permission, /plan, …) instead
of prompting the model. The workspace is the current directory. Exit 0 only when the
turn (or command) completed; 2 for an unknown command.`

/** The `--reasoning-effort` values (every `ReasoningEffort`). */

/** Environment defaults: DSH_PROVIDER, DSH_MODEL, DSH_PERMISSION_MODE, DSH_MAX_TOKENS, DSH_REASONING_EFFORT. */
const ENV_FLAGS: [string, string][] = [
  ['DSH_PROVIDER', '--provider'], ['DSH_MODEL', '--model'], ['DSH_PERMISSION_MODE', '--permission-mode'],
  ['DSH_MAX_TOKENS', '--max-tokens'], ['DSH_REASONING_EFFORT', '--reasoning-effort'],
]

/**
 * Parses the headless surface's own argv (everything after the launcher's flags).
 * DSH_* variables stand in for flags that are not given (a flag wins); both are validated
 * alike, and an error names the variable when the value came from it.
 */
export function parseHeadlessArgs(argv: readonly string[], env: Record<string, string | undefined> = {}): HeadlessArgs {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv], allowPositionals: true, strict: true,
      options: {
        provider: { type: 'string' }, model: { type: 'string' }, resume: { type: 'string' },
        json: { type: 'boolean' }, 'permission-mode': { type: 'string' }, 'max-tokens': { type: 'string' },
        'reasoning-effort': { type: 'string' }, agent: { type: 'string' }, help: { type: 'boolean', short: 'h' },
        world: { type: 'string' }, identity: { type: 'string' }, 'known-hosts': { type: 'string' },
      },
    })
  } catch (error) {
    throw new DshError('USAGE', (error as Error).message, { hint: 'run `dsh --profile headless --help`' })
  }
  const { values, positionals } = parsed
  // a DSH_* variable stands in for its flag when the flag is not given; errors name the source
  const label: Record<string, string> = {}
  for (const [name, flag] of ENV_FLAGS) {
    const key = flag.slice(2) as keyof typeof values
    label[key] = flag
    if (values[key] === undefined && env[name]) {
      (values as Record<string, unknown>)[key] = env[name]
      label[key] = name
    }
  }
  if (positionals.length > 1) {
    throw new DshError('USAGE', `expected one task argument, got ${positionals.length} (quote the task)`, { hint: 'dsh --profile headless "fix the failing test"' })
  }
  const task = positionals[0]
  const out: HeadlessArgs = { task: task === '-' ? undefined : task, fromStdin: task === '-', json: !!values.json, help: !!values.help }
  if (values.provider) out.provider = values.provider
  if (values.model) out.model = values.model
  if (values.resume) out.resume = values.resume
  if (values.agent) out.agent = values.agent
  if (values.world) out.world = values.world
  if (values.identity) out.identity = values.identity
  if (values['known-hosts']) out.knownHosts = values['known-hosts']
  if ((out.identity || out.knownHosts) && !out.world) throw new DshError('USAGE', '--identity and --known-hosts need --world ssh://USER@HOST[:PORT]/ROOT')
  if (values['permission-mode']) {
    const mode = values['permission-mode']
    if (!PERMISSION_PRESETS.some((p) => p.id === mode)) {
      throw new DshError('USAGE', `${label['permission-mode']} must be one of ${PERMISSION_PRESETS.map((p) => p.id).join(', ')}, got "${mode}"`)
    }
    out.permissionMode = mode
  }
  if (values['max-tokens'] !== undefined) {
    const n = Number(values['max-tokens'])
    if (!Number.isInteger(n) || n <= 0) throw new DshError('USAGE', `${label['max-tokens']} must be a positive integer, got "${values['max-tokens']}"`)
    out.maxTokens = n
  }
  if (values['reasoning-effort'] !== undefined) {
    if (!(REASONING_EFFORTS as readonly string[]).includes(values['reasoning-effort'])) {
      throw new DshError('USAGE', `${label['reasoning-effort']} must be one of ${REASONING_EFFORTS.join(', ')}, got "${values['reasoning-effort']}"`)
    }
    out.reasoningEffort = values['reasoning-effort'] as ReasoningEffort
  }
  return out
}
