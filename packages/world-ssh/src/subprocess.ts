import { DshError } from '@dsh/protocol'
import type { SpawnOptions, SpawnResult, SubprocessSeam } from '@dsh/exec'
import type { SshConnection } from './connection.js'
import { shq } from './quote.js'

/**
 * The script `/bin/sh` runs on the remote (the login shell only `exec`s it, so no rc file
 * of /bin/sh runs): it reports its pid on the channel's stderr, merges stderr into stdout,
 * enters the working directory and replaces itself by argv under `env -i` plus the
 * login's HOME/USER/LOGNAME/PATH and the given variables. sshd has made the process a
 * session and group leader (setsid(2) before exec'ing the shell), so that pid is the
 * group to signal; `setsid(1)` would fork here, losing the exit status.
 */
const WRAPPER = 'printf "%s\\n" "$$" >&2; exec 2>&1; cd -- "$1" || exit 126; shift; '
  + 'exec env -i HOME="$HOME" USER="$USER" LOGNAME="$LOGNAME" PATH="$PATH" SHELL=/bin/sh "$@"'

/** The exec request's command string for `argv` in `cwd` with `env` (values quoted, never SetEnv). Pure. */
export function remoteCommand(argv: readonly string[], cwd: string, env: Record<string, string | undefined> = {}): string {
  const pairs = Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(e[0]))
  const words = [cwd, ...pairs.map(([k, v]) => `${k}=${v}`), ...argv]
  return `exec /bin/sh -c ${shq(WRAPPER)} sh ${words.map(shq).join(' ')}`
}

/** `kill` of a whole remote group; ESRCH (already gone) is silent. */
export function killCommand(pgid: number, signal: 'TERM' | 'KILL'): string {
  return `kill -${signal} -${pgid} 2>/dev/null; true`
}

/** How long after the leader's exit the channel may take to close before leftovers are killed. */
const LEFTOVER_WAIT_MS = 100

export interface SshSubprocessOptions {
  killGraceMs: number
}

/**
 * `ctx.subprocess` over one exec channel per process. `options.env` is the child's whole
 * environment on top of the remote login's HOME/USER/LOGNAME/PATH; nothing of the host's
 * environment is sent unless a caller passes it. Rejects with WORLD_CONNECTION_LOST when
 * the connection drops while the process runs (its group is killed on reconnect).
 */
export class SshSubprocess implements SubprocessSeam {
  constructor(private readonly conn: SshConnection, private readonly options: SshSubprocessOptions) {}

  async run(argv: string[], options: SpawnOptions): Promise<SpawnResult> {
    if (argv.length === 0) throw new DshError('SPAWN_FAILED', 'Empty command line.')
    if (options.signal?.aborted) return { exitCode: null, signal: null, timedOut: false, aborted: true }
    const env = options.env && options.env === process.env ? {} : options.env ?? {}
    const channel = await this.conn.exec(remoteCommand(argv, options.cwd, env))
    const grace = options.killGraceMs ?? this.options.killGraceMs
    return new Promise<SpawnResult>((resolve, reject) => {
      let pgid: number | undefined
      let pidLine = ''
      let timedOut = false
      let aborted = false
      let terminating = false
      let exit: { code: number | null; signal: string | null } | undefined
      let settled = false
      const timers: NodeJS.Timeout[] = []

      const signalGroup = (signal: 'TERM' | 'KILL') => {
        if (pgid !== undefined) void this.conn.fire(killCommand(pgid, signal))
      }
      const terminate = () => {
        if (terminating) return
        terminating = true
        if (pgid === undefined) return // done when the pid arrives
        signalGroup('TERM')
        timers.push(setTimeout(() => signalGroup('KILL'), grace))
      }
      const cleanup = () => {
        settled = true
        for (const t of timers) clearTimeout(t)
        options.signal?.removeEventListener('abort', onAbort)
        untrack()
      }
      const onAbort = () => {
        aborted = true
        terminate()
      }
      const untrack = this.conn.track((error) => {
        if (settled) return
        if (pgid !== undefined) this.conn.orphans.add(pgid)
        cleanup()
        reject(error)
      })

      channel.stderr.on('data', (chunk: Buffer) => {
        if (pgid !== undefined) return options.onData?.(chunk)
        pidLine += chunk.toString('latin1')
        const nl = pidLine.indexOf('\n')
        if (nl === -1) return
        pgid = Number(pidLine.slice(0, nl))
        options.onSpawn?.(pgid)
        const rest = pidLine.slice(nl + 1)
        if (rest) options.onData?.(Buffer.from(rest, 'latin1'))
        if (terminating) {
          terminating = false
          terminate()
        }
      })
      channel.on('data', (chunk: Buffer) => options.onData?.(chunk))
      channel.on('exit', (code: number | null, signal?: string) => {
        exit = { code: typeof code === 'number' ? code : null, signal: signal ? (signal.startsWith('SIG') ? signal : `SIG${signal}`) : null }
        // leftovers of the group end with the leader: at once when they hold the output open
        // (no close follows); otherwise after the close, because a kill racing sshd's reaping
        // of the leader can cost the exit status (seen about once in 150 runs)
        timers.push(setTimeout(() => signalGroup('KILL'), LEFTOVER_WAIT_MS))
      })
      channel.on('close', () => {
        if (settled) return
        // the leader is gone once its channel closes, with or without an exit status (sshd can
        // drop it): whatever it left in its group ends now either way
        signalGroup('KILL')
        cleanup()
        resolve({ exitCode: exit?.code ?? null, signal: exit?.signal ?? null, timedOut, aborted })
      })
      channel.end() // stdin closed
      if (options.timeoutMs !== undefined && options.timeoutMs > 0) {
        timers.push(setTimeout(() => {
          timedOut = true
          terminate()
        }, options.timeoutMs))
      }
      options.signal?.addEventListener('abort', onAbort, { once: true })
      // aborted while the channel was being opened: the listener would never fire
      if (options.signal?.aborted) onAbort()
    })
  }
}
