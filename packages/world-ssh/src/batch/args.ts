import { parseArgs } from 'node:util'
import { DshError } from '@dsh/protocol'

export interface BatchArgs {
  tasks: string
  hosts?: string
  parallel: number
  out?: string
  keepGoing: boolean
  identity?: string
  knownHosts?: string
  help: boolean
}

export const BATCH_USAGE = `usage: dsh batch TASKS.jsonl [--hosts HOSTS.yaml] [--parallel N] [--out RESULTS.jsonl] [--keep-going]

TASKS.jsonl: one task a line, {"id", "prompt", "workspace"?, "model"?, "permissionMode"?}.
HOSTS.yaml:  a list of {url: ssh://USER@HOST[:PORT]/ROOT, identity?, knownHosts?, slots?: 1};
             each task then runs on a host, in ROOT/<workspace or id>. Without --hosts a
             task runs locally in <workspace or id> (relative to the current directory).
options:
  --parallel N        tasks at once (default 4; never more than the hosts' slots)
  --out FILE          results (default TASKS.results.jsonl); a re-run skips completed
                      ids and resumes interrupted sessions
  --keep-going        run the valid lines even when some lines are invalid
  --identity FILE     default key of hosts that name none (default ~/.ssh/id_ed25519)
  --known-hosts FILE  default known_hosts of hosts that name none (default ~/.ssh/known_hosts)
Exit 0 only when every task completed; 2 for bad input; 130 after Ctrl-C.`

/** The batch surface's argv (after `dsh batch`). Pure. */
export function parseBatchArgs(argv: readonly string[]): BatchArgs {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv], allowPositionals: true, strict: true,
      options: {
        hosts: { type: 'string' }, parallel: { type: 'string' }, out: { type: 'string' }, 'keep-going': { type: 'boolean' },
        identity: { type: 'string' }, 'known-hosts': { type: 'string' }, help: { type: 'boolean', short: 'h' },
      },
    })
  } catch (error) {
    throw new DshError('USAGE', (error as Error).message, { hint: 'dsh batch --help' })
  }
  const { values, positionals } = parsed
  if (values.help) return { tasks: '', parallel: 1, keepGoing: false, help: true }
  if (positionals.length !== 1) throw new DshError('USAGE', `expected one TASKS.jsonl argument, got ${positionals.length}`, { hint: 'dsh batch TASKS.jsonl [--hosts HOSTS.yaml]' })
  const parallel = values.parallel === undefined ? 4 : Number(values.parallel)
  if (!Number.isInteger(parallel) || parallel < 1) throw new DshError('USAGE', `--parallel must be a positive integer, got "${values.parallel}"`)
  const out: BatchArgs = { tasks: positionals[0]!, parallel, keepGoing: !!values['keep-going'], help: false }
  if (values.hosts) out.hosts = values.hosts
  if (values.out) out.out = values.out
  if (values.identity) out.identity = values.identity
  if (values['known-hosts']) out.knownHosts = values['known-hosts']
  return out
}
