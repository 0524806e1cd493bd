import { spawn } from 'node:child_process'
import { Service, type Context } from '@deepseek-ai/cordis'
import { DshError } from '@dsh/protocol'
import { ChannelFactory, type Channel } from './channel.js'
import { groupHasLiveMembers } from './procfs.js'
import type { SpawnOptions, SpawnResult, SubprocessSeam } from './types.js'

/** Merges stderr into stdout at the OS level, so the order is the order of the writes. */
const MERGE_SCRIPT = 'exec 2>&1; exec "$@"'

function killGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal)
    return true
  } catch {
    return false
  }
}

export interface LocalSubprocessOptions {
  killGraceMs: number
  /** The POSIX shell used to merge the streams before exec'ing argv. */
  shPath: string
}

/** The local provider of `ctx.subprocess`. Live groups are SIGKILLed when the plugin or the process goes away. */
export class LocalSubprocess extends Service implements SubprocessSeam {
  private readonly live = new Set<number>()
  private readonly channels = new ChannelFactory()

  constructor(ctx: Context, private readonly options: LocalSubprocessOptions) {
    super(ctx, 'subprocess')
    const onExit = () => {
      this.killAll()
      this.channels.close()
    }
    process.on('exit', onExit)
    ctx.effect(() => () => {
      process.off('exit', onExit)
      onExit()
    })
  }

  /** SIGKILL every group still running (synchronous; used on dispose and process exit). */
  killAll(): void {
    for (const pgid of this.live) killGroup(pgid, 'SIGKILL')
    this.live.clear()
  }

  async run(argv: string[], options: SpawnOptions): Promise<SpawnResult> {
    if (argv.length === 0) throw new DshError('SPAWN_FAILED', 'Empty command line.')
    const aborted = { exitCode: null, signal: null, timedOut: false, aborted: true }
    if (options.signal?.aborted) return aborted
    // where sockets cannot be made, a plain pipe (a new buffer per read)
    const channel = await this.channels.take().catch(() => undefined)
    if (options.signal?.aborted) {
      channel?.reader.destroy()
      channel?.childEnd.destroy()
      return aborted
    }
    return this.spawn(argv, options, channel)
  }

  private spawn(argv: string[], options: SpawnOptions, channel: Channel | undefined): Promise<SpawnResult> {
    const grace = options.killGraceMs ?? this.options.killGraceMs
    return new Promise<SpawnResult>((resolve, reject) => {
      let child
      try {
        child = spawn(this.options.shPath, ['-c', MERGE_SCRIPT, 'sh', ...argv], {
          cwd: options.cwd,
          env: options.env ?? process.env,
          detached: true,
          stdio: ['ignore', channel ? channel.childEnd : 'pipe', 'ignore'],
        })
      } finally {
        // the child holds its own copy now: EOF comes when the child's side closes
        channel?.childEnd.destroy()
      }
      const stdout = channel ? channel.reader : child.stdout!
      let timedOut = false
      let aborted = false
      let terminating = false
      let exit: { code: number | null; signal: string | null } | undefined
      let closed = false
      /** Whether the group still had live members when the leader exited. */
      let leftovers = true
      const timers: NodeJS.Timeout[] = []
      let timeoutTimer: NodeJS.Timeout | undefined
      const pgid = child.pid

      const terminate = () => {
        if (terminating || pgid === undefined) return
        terminating = true
        killGroup(pgid, 'SIGTERM')
        timers.push(setTimeout(() => killGroup(pgid, 'SIGKILL'), grace))
      }
      const onAbort = () => {
        aborted = true
        terminate()
      }
      const stopWatching = () => {
        clearTimeout(timeoutTimer)
        for (const t of timers) clearTimeout(t)
        options.signal?.removeEventListener('abort', onAbort)
      }
      const finish = () => {
        if (!exit || !closed) return
        stopWatching()
        const done = { exitCode: exit.code, signal: exit.signal, timedOut, aborted }
        // a group empty at the leader's exit stays empty (only members add members), so
        // the /proc scan is not repeated then
        if (pgid === undefined || !leftovers || !groupHasLiveMembers(pgid, false)) {
          if (pgid !== undefined) this.live.delete(pgid)
          return resolve(done)
        }
        // The leader is gone and the pipe closed; whatever is left in the group is killed
        // outright, and the call settles once the group is empty (bounded wait).
        killGroup(pgid, 'SIGKILL')
        const deadline = Date.now() + 1000
        const poll = setInterval(() => {
          if (groupHasLiveMembers(pgid) && Date.now() < deadline) return
          clearInterval(poll)
          this.live.delete(pgid)
          resolve(done)
        }, 10)
      }

      child.once('error', (error) => {
        stopWatching()
        stdout.destroy()
        if (pgid !== undefined) this.live.delete(pgid)
        reject(new DshError('SPAWN_FAILED', `Cannot start ${argv[0]} in ${options.cwd}: ${error.message}`, { cause: error }))
      })
      if (pgid === undefined) return
      this.live.add(pgid)
      options.onSpawn?.(pgid)
      if (channel) {
        channel.onChunk = options.reuseBuffer ? (chunk) => options.onData?.(chunk) : (chunk) => options.onData?.(Buffer.from(chunk))
      } else {
        stdout.on('data', (chunk: Buffer) => options.onData?.(chunk))
      }
      stdout.on('error', () => stdout.destroy())
      stdout.once('close', () => {
        closed = true
        finish()
      })
      child.once('exit', (code, signal) => {
        exit = { code, signal }
        clearTimeout(timeoutTimer)
        // Leftovers hold the pipe open: end them so the stream closes.
        leftovers = groupHasLiveMembers(pgid, false)
        if (leftovers) {
          terminate()
          timers.push(setTimeout(() => stdout.destroy(), grace + 1000))
        }
        finish()
      })
      if (options.timeoutMs !== undefined && options.timeoutMs > 0) {
        timeoutTimer = setTimeout(() => {
          timedOut = true
          terminate()
        }, options.timeoutMs)
      }
      options.signal?.addEventListener('abort', onAbort, { once: true })
    })
  }
}
