import { spawn } from 'node:child_process'
import type { Readable } from 'node:stream'
import { Service, type Context } from '@deepseek-ai/cordis'
import { DshError } from '@dsh/protocol'
import { ChannelFactory, type Channel } from './channel.js'
import { groupHasLiveMembers } from './procfs.js'
import { SharedSandboxes } from './shared-sandbox.js'
import { SpawnerPool, type LaunchEvents, type Spawner } from './spawner.js'
import type { SpawnOptions, SpawnResult, SubprocessSeam } from './types.js'

/** Merges stderr into stdout at the OS level, so the order is the order of the writes (fallback path). */
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
  /** The POSIX shell that merges the streams before exec'ing argv (fallback path only). */
  shPath: string
  /** Perl for the spawner (0080); empty: always Node's spawn. */
  perlPath?: string
  /** Run a call with `share` in a sandbox kept for calls of the same confinement (0092); false: a sandbox per call. Needs the spawner. */
  shareSandbox?: boolean
  /** Calls of one confinement in a row before its shared sandbox starts (default `SHARE_AFTER_CALLS`). */
  shareAfterCalls?: number
}

/** A launched command: its output stream and the launcher's events. */
interface Launch {
  stdout: Readable
  release(pgid: number): void
  /** Gives up on a launcher that no longer reports (a shared sandbox whose spawner a command stopped): its calls are lost. */
  abandon?(): void
  /** The call ran in a shared sandbox (0092): processes outside its group may hold its stream after the leader's exit. */
  shared?: boolean
}

/** After the leader's exit in a shared sandbox, the stream is read until it was quiet this long. */
const SHARED_DRAIN_QUIET_MS = 100

/**
 * The local provider of `ctx.subprocess`. Commands are forked by a small long-lived spawner
 * (0080) when perl is there, else by Node's `spawn`. Live groups are SIGKILLed when the
 * plugin or the process goes away.
 */
export class LocalSubprocess extends Service implements SubprocessSeam {
  private readonly live = new Set<number>()
  private readonly channels = new ChannelFactory()
  private readonly spawners: SpawnerPool
  private readonly sandboxes: SharedSandboxes | undefined

  constructor(ctx: Context, private readonly options: LocalSubprocessOptions) {
    super(ctx, 'subprocess')
    this.spawners = new SpawnerPool(options.perlPath)
    // started now, not at the first command: perl comes up (~13 ms) on another core while the
    // tree boots and the first model request is in flight (decision 0095)
    void this.spawners.get()
    this.sandboxes = options.perlPath && options.shareSandbox !== false ? new SharedSandboxes(options.perlPath, options.shareAfterCalls) : undefined
    const onExit = () => {
      this.killAll()
      this.sandboxes?.close()
      this.channels.close()
      this.spawners.close()
    }
    process.on('exit', onExit)
    ctx.effect(() => () => {
      process.off('exit', onExit)
      onExit()
    })
  }

  /** The running spawner's pid, if any (diagnostics and tests). */
  get spawnerPid(): number | undefined {
    return this.spawners.current?.pid
  }

  /** The outer pids of the shared sandboxes running now (diagnostics and tests). */
  get sandboxPids(): number[] {
    return this.sandboxes?.running.flatMap((b) => (b.pid === undefined ? [] : [b.pid])) ?? []
  }

  /** Resolves once a shared sandbox being started is up or has failed (tests and benchmarks: until then, calls run per call). */
  async sandboxesSettled(): Promise<void> {
    await this.sandboxes?.settled()
  }

  /** SIGKILL every group still running (synchronous; used on dispose and process exit). */
  killAll(): void {
    for (const pgid of this.live) killGroup(pgid, 'SIGKILL')
    this.live.clear()
  }

  async run(argv: string[], options: SpawnOptions): Promise<SpawnResult> {
    if (argv.length === 0) throw new DshError('SPAWN_FAILED', 'Empty command line.')
    checkNoNul(argv, options)
    const aborted = { exitCode: null, signal: null, timedOut: false, aborted: true }
    if (options.signal?.aborted) return aborted
    const host = await this.spawners.get()
    // a call with `share` runs in the shared sandbox when there is one, else its per-call argv
    const box = host && options.share && this.sandboxes ? this.sandboxes.get(options.share, host) : undefined
    let spawner: Spawner | undefined = box ?? host
    let channel = spawner ? await spawner.channels.take().catch(() => undefined) : undefined
    if (!channel && box && host) {
      // the sandbox just went away (the next call starts a new one): a per-call sandbox this time
      spawner = host
      channel = await host.channels.take().catch(() => undefined)
    }
    if (!channel) {
      // the spawner just went away (the next command starts a new one): Node spawn this time;
      // where sockets cannot be made at all, a plain pipe (a new buffer per read)
      spawner = undefined
      channel = await this.channels.take().catch(() => undefined)
    }
    if (options.signal?.aborted) {
      channel?.reader.destroy()
      channel?.childEnd?.destroy()
      return aborted
    }
    return new Promise<SpawnResult>((resolve, reject) => {
      const events = this.supervise(argv, options, resolve, reject)
      const env = options.env ?? process.env
      if (spawner && channel) {
        const launcher = spawner
        events.attach({ stdout: channel.reader, release: (pgid) => launcher.release(pgid), ...(launcher === box ? { abandon: () => box.close(), shared: true } : {}) }, channel)
        launcher.launch(launcher === box ? [...options.share!.command] : argv, options.cwd, env, channel, events)
      } else {
        this.nodeSpawn(argv, options.cwd, env, channel, events)
      }
    })
  }

  /**
   * The fallback: Node forks this whole process. With a channel, stdout and stderr are both
   * its socket (one file, so writes keep their order); without one, a merge shell joins them
   * (and a missing program is the shell's exit 127 instead of SPAWN_FAILED).
   */
  private nodeSpawn(argv: string[], cwd: string, env: Record<string, string | undefined>, channel: Channel | undefined, events: Supervisor): void {
    let child
    try {
      const end = channel?.childEnd
      child = end
        ? spawn(argv[0]!, argv.slice(1), { cwd, env, detached: true, stdio: ['ignore', end, end] })
        : spawn(this.options.shPath, ['-c', MERGE_SCRIPT, 'sh', ...argv], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'ignore'] })
    } finally {
      // the child holds its own copy now: EOF comes when the child's side closes
      channel?.childEnd?.destroy()
    }
    events.attach({ stdout: channel ? channel.reader : child.stdout!, release: () => {} }, channel)
    const pid = child.pid
    child.once('error', (error: NodeJS.ErrnoException) => {
      const errno = error.code
      events.failed(new DshError('SPAWN_FAILED', `Cannot start ${argv[0]} in ${cwd}: ${error.message}`, { cause: error, data: { errno } }))
    })
    if (pid === undefined) return
    child.once('exit', (code, signal) => events.exited(code, signal))
    events.started(pid)
  }

  /** Timeouts, aborts, output, leftovers and settling for one call, whichever launcher runs it. */
  private supervise(argv: string[], options: SpawnOptions, resolve: (r: SpawnResult) => void, reject: (e: unknown) => void): Supervisor {
    const grace = options.killGraceMs ?? this.options.killGraceMs
    let launch: Launch | undefined
    let pgid: number | undefined
    let timedOut = false
    let aborted = false
    let terminating = false
    let settled = false
    let exit: { code: number | null; signal: string | null } | undefined
    let lost: DshError | undefined
    let closed = false
    /** Chunks read so far (the drain after the leader's exit waits for them to stop). */
    let chunks = 0
    /** Whether the group still had live members when the leader exited. */
    let leftovers = true
    const timers: NodeJS.Timeout[] = []
    let timeoutTimer: NodeJS.Timeout | undefined

    const terminate = () => {
      if (terminating || pgid === undefined) return
      terminating = true
      killGroup(pgid, 'SIGTERM')
      timers.push(setTimeout(() => killGroup(pgid!, 'SIGKILL'), grace))
      // the group is gone but its launcher never said so (inside a shared sandbox a command can
      // SIGSTOP the spawner, same uid): lost, not hung
      if (launch?.abandon) timers.push(setTimeout(() => { if (!exit && !groupHasLiveMembers(pgid!)) launch?.abandon?.() }, grace + 2000))
    }
    // a launcher that never reports the start (a shared sandbox's spawner stopped by a command
    // before it said `S`) is given up once the call's own deadline has passed
    const stuck = () => { if (!settled && pgid === undefined) launch?.abandon?.() }
    const onAbort = () => {
      aborted = true
      terminate()
      if (pgid === undefined) timers.push(setTimeout(stuck, grace + 2000))
    }
    const stopWatching = () => {
      clearTimeout(timeoutTimer)
      for (const t of timers) clearTimeout(t)
      options.signal?.removeEventListener('abort', onAbort)
    }
    const done = () => {
      settled = true
      if (pgid !== undefined) {
        this.live.delete(pgid)
        launch?.release(pgid)
      }
      if (lost) return reject(lost)
      resolve({ exitCode: exit!.code, signal: exit!.signal, timedOut, aborted })
    }
    const finish = () => {
      if (!exit || !closed || settled) return
      stopWatching()
      // a group empty at the leader's exit stays empty (only members add members), so
      // the /proc scan is not repeated then
      if (pgid === undefined || !leftovers || !groupHasLiveMembers(pgid, false)) return done()
      // The leader is gone and the stream closed; whatever is left in the group is killed
      // outright, and the call settles once the group is empty (bounded wait).
      killGroup(pgid, 'SIGKILL')
      const deadline = Date.now() + 1000
      const poll = setInterval(() => {
        if (groupHasLiveMembers(pgid!) && Date.now() < deadline) return
        clearInterval(poll)
        done()
      }, 10)
    }
    // In a shared sandbox a process that left the group (setsid) can hold the stream after the
    // leader's exit; a per-call sandbox ended it with the leader (its pid 1 exits). So the stream
    // is read until quiet (at most grace + 1 s), then closed: the call settles, and the sweep
    // after the sandbox's last running call ends that process.
    const drainShared = () => {
      let seen = chunks
      const poll = setInterval(() => {
        if (chunks !== seen) return void (seen = chunks)
        clearInterval(poll)
        launch?.stdout.destroy()
      }, SHARED_DRAIN_QUIET_MS)
      timers.push(poll, setTimeout(() => launch?.stdout.destroy(), grace + 1000))
    }
    const onLeaderGone = () => {
      clearTimeout(timeoutTimer)
      // Leftovers hold the stream open: end them so it closes.
      leftovers = groupHasLiveMembers(pgid!, false)
      if (leftovers) {
        if (lost) killGroup(pgid!, 'SIGKILL')
        else terminate()
        timers.push(setTimeout(() => launch?.stdout.destroy(), grace + 1000))
      } else if (launch?.shared && !closed) {
        drainShared()
      }
      finish()
    }
    options.signal?.addEventListener('abort', onAbort, { once: true })

    return {
      attach: (l, channel) => {
        launch = l
        if (l.abandon && options.timeoutMs !== undefined && options.timeoutMs > 0) timers.push(setTimeout(stuck, options.timeoutMs + grace + 2000))
        if (channel) {
          channel.onChunk = options.reuseBuffer ? (chunk) => { chunks++; options.onData?.(chunk) } : (chunk) => { chunks++; options.onData?.(Buffer.from(chunk)) }
        } else {
          l.stdout.on('data', (chunk: Buffer) => { chunks++; options.onData?.(chunk) })
        }
        l.stdout.on('error', () => l.stdout.destroy())
        l.stdout.once('close', () => {
          closed = true
          finish()
        })
      },
      started: (pid) => {
        pgid = pid
        this.live.add(pid)
        options.onSpawn?.(pid)
        if (aborted) terminate()
        if (options.timeoutMs !== undefined && options.timeoutMs > 0) {
          timeoutTimer = setTimeout(() => {
            timedOut = true
            terminate()
          }, options.timeoutMs)
        }
      },
      failed: (error) => {
        if (settled) return
        settled = true
        stopWatching()
        launch?.stdout.destroy()
        if (pgid !== undefined) this.live.delete(pgid)
        reject(error)
      },
      exited: (code, signal) => {
        exit = { code, signal }
        onLeaderGone()
      },
      lost: (error) => {
        lost = error
        exit = { code: null, signal: null }
        onLeaderGone()
      },
    }
  }
}

interface Supervisor extends LaunchEvents {
  /** Wires the output stream (and the channel's reads) before the launcher starts. */
  attach(launch: Launch, channel: Channel | undefined): void
}

/** NUL cannot cross exec (C strings): refused up front, naming the field, on every path. */
function checkNoNul(argv: string[], options: SpawnOptions): void {
  const where = argv.findIndex((arg) => arg.includes('\0'))
  if (where >= 0) throw new DshError('SPAWN_FAILED', `Cannot start ${JSON.stringify(argv[0])}: argument ${where} contains a NUL byte.`)
  if (options.cwd.includes('\0')) throw new DshError('SPAWN_FAILED', `Cannot start ${JSON.stringify(argv[0])}: the working directory contains a NUL byte.`)
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) continue
    const name = JSON.stringify(key.replaceAll('\0', '\\0'))
    if (key.includes('\0') || value.includes('\0')) throw new DshError('SPAWN_FAILED', `Cannot start ${JSON.stringify(argv[0])}: environment variable ${name} contains a NUL byte.`)
    if (key === '' || key.includes('=')) throw new DshError('SPAWN_FAILED', `Cannot start ${JSON.stringify(argv[0])}: ${name} is not a valid environment variable name.`)
  }
}
