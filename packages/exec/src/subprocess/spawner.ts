import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import type { Socket } from 'node:net'
import { constants, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { DshError } from '@dsh/protocol'
import { ChannelFactory, type Channel } from './channel.js'
import { SPAWNER_SCRIPT } from './spawner-script.js'

/** What one launched command reports, in this order: started or failed, then exited or lost. */
export interface LaunchEvents {
  started(pid: number): void
  failed(error: DshError): void
  exited(code: number | null, signal: string | null): void
  /** The spawner died after the exec: the exit status is unknowable. */
  lost(error: DshError): void
}

const SIGNAL_NAMES = new Map<number, string>(Object.entries(constants.signals).map(([name, n]) => [n, name]))
const ERRNO_NAMES = new Map<number, string>(Object.entries(constants.errno).map(([name, n]) => [n, name]))
const STAGES: Record<string, string> = { chdir: 'cannot enter the working directory', exec: 'cannot execute it', setup: 'cannot set up its output', fork: 'cannot fork', pipe: 'cannot make a pipe' }
const READY_TIMEOUT_MS = 10_000

/** A child's pipe is a net.Socket (typed as a plain stream). */
function socketOf(stream: Readable): Socket {
  return stream as unknown as Socket
}

/** How dsh talks to one spawner: frames out, and the spawner's output in through `Spawner.feed`. */
export interface SpawnerLink {
  write(frame: Buffer): void
  /** Keep dsh alive while a call runs (ref) or not (unref). */
  ref(): void
  unref(): void
  /** Ends the spawner (it reads EOF). */
  close(): void
}

/**
 * One running spawner (`spawner-script.ts`) and its channel factory (channels connect to
 * the spawner's socket). Start with `Spawner.start` (on the host) or `startSharedSandbox`
 * (inside a sandbox: `hostPid` maps the pids it reports to the host's); `alive` turns false
 * once it exited, and every call still in it then settles (`failed` before the exec, `lost`
 * after).
 */
export class Spawner {
  readonly channels: ChannelFactory
  alive = true
  /** What the errors call it. */
  label = 'process spawner'
  /** Called once when the spawner ended (or was closed). */
  onGone: () => void = () => {}
  /** Called whenever no call runs and no group awaits its `release`. */
  onIdle: () => void = () => {}
  private closed = false
  private nextId = 1
  private readonly calls = new Map<number, { events: LaunchEvents; started: boolean; argv0: string; cwd: string; holds: boolean }>()
  /** Calls that keep dsh alive while they run. */
  private holding = 0
  /** Host pgid → the spawner's own pgid, for the groups not released yet. */
  private readonly held = new Map<number, number>()
  private lineBuffer = ''

  constructor(private readonly link: SpawnerLink, private readonly dir: string | undefined, socketPath: string,
    readonly pid: number | undefined, private readonly hostPid?: (pid: number) => number | undefined) {
    this.channels = new ChannelFactory(socketPath)
  }

  /** A path in the spawner's private directory (its files are removed with it, even when dsh is killed). */
  privatePath(name: string): string | undefined {
    return this.dir ? join(this.dir, name) : undefined
  }

  /** Whether a call runs or a group awaits its release. */
  get busy(): boolean {
    return this.calls.size > 0 || this.held.size > 0
  }

  /** Starts perl with the spawner script; rejects when perl is missing or the script does not come up. */
  static start(perlPath: string): Promise<Spawner> {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-spawn-'))
    const socketPath = join(dir, 'spawner.sock')
    return new Promise<Spawner>((resolve, reject) => {
      // a clean environment: PERL5OPT, PERL5LIB… from the user's must not load code into it
      const child = spawn(perlPath, ['-e', SPAWNER_SCRIPT, socketPath], {
        cwd: '/', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, detached: true, stdio: ['pipe', 'pipe', 'pipe'],
      })
      let stderr = ''
      const fail = (why: string) => {
        clearTimeout(timer)
        child.kill('SIGKILL')
        rmSync(dir, { recursive: true, force: true })
        reject(new DshError('SPAWNER_FAILED', `The process spawner (${perlPath}) did not start: ${why}`))
      }
      const timer = setTimeout(() => fail('no answer'), READY_TIMEOUT_MS)
      child.once('error', (error) => fail(error.message))
      child.once('exit', (code, signal) => fail(stderr.trim() || `exit ${code ?? signal}`))
      child.stderr.on('data', (data: Buffer) => { if (stderr.length < 4096) stderr += data.toString() })
      child.stdout.once('data', (data: Buffer) => {
        if (!data.toString().startsWith('R\n')) return fail(`unexpected answer ${JSON.stringify(data.toString().slice(0, 80))}`)
        clearTimeout(timer)
        child.removeAllListeners('exit')
        child.removeAllListeners('error')
        child.on('error', () => {})
        child.stderr.removeAllListeners('data')
        child.stderr.resume()
        socketOf(child.stderr).unref()
        const link: SpawnerLink = {
          write: (frame) => { child.stdin.write(frame) },
          ref: () => socketOf(child.stdout).ref(),
          unref: () => socketOf(child.stdout).unref(),
          close: () => child.stdin.destroy(),
        }
        const spawner = new Spawner(link, dir, socketPath, child.pid)
        child.stdout.on('data', (chunk: Buffer) => spawner.feed(chunk))
        child.stdout.once('close', () => spawner.die())
        child.once('exit', () => spawner.die())
        child.stdin.on('error', () => spawner.die())
        socketOf(child.stdout).unref()
        child.unref()
        const rest = data.subarray(2)
        if (rest.length > 0) spawner.feed(rest)
        resolve(spawner)
      })
    })
  }

  /**
   * Asks the spawner to run `argv` with `channel` as its stdout+stderr. Fields must be free of
   * NUL (the caller checks). Events follow on `events`. `holds: false`: the call does not keep
   * dsh's event loop alive (a shared sandbox, which lives as long as dsh).
   */
  launch(argv: string[], cwd: string, env: Record<string, string | undefined>, channel: Channel, events: LaunchEvents, holds = true): void {
    const id = this.nextId++
    if (!this.alive) return events.failed(this.gone(argv[0]!, cwd))
    const envEntries = Object.entries(env).flatMap(([key, value]) => (value === undefined ? [] : [`${key}=${value}`]))
    this.calls.set(id, { events, started: false, argv0: argv[0]!, cwd, holds })
    if (holds && this.holding++ === 0) this.link.ref()
    this.send(['run', String(id), channel.token, cwd, String(argv.length), ...argv, ...envEntries])
  }

  /** The call for group `pgid` settled: the spawner forgets the group (it kills remembered groups when dsh dies). */
  release(pgid: number): void {
    const own = this.held.get(pgid)
    if (own === undefined) return
    this.held.delete(pgid)
    if (this.alive) this.send(['done', String(own)])
    if (!this.busy) this.onIdle()
  }

  /** Ends the spawner: it sees EOF, SIGKILLs the groups it still knows and exits; calls still in it settle now. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.channels.close()
    this.link.close()
    if (this.dir) rmSync(this.dir, { recursive: true, force: true })
    this.die()
  }

  private send(fields: string[]): void {
    const payload = Buffer.from(fields.join('\0'), 'utf8')
    const frame = Buffer.allocUnsafe(4 + payload.length)
    frame.writeUInt32BE(payload.length, 0)
    payload.copy(frame, 4)
    if (!this.closed) this.link.write(frame)
  }

  /** The spawner's output (the `R` line already taken). */
  feed(data: Buffer): void {
    const lines = (this.lineBuffer + data.toString('latin1')).split('\n')
    this.lineBuffer = lines.pop()!
    for (const line of lines) this.onLine(line)
  }

  private onLine(line: string): void {
    const [kind, idText, a, b, ...rest] = line.split(' ')
    const id = Number(idText)
    const call = this.calls.get(id)
    if (!call) return
    if (kind === 'S') {
      const own = Number(a)
      const pid = this.hostPid ? this.hostPid(own) : own
      if (this.hostPid) this.send(['ack', String(own)])
      call.started = true
      if (pid === undefined) {
        // a process it cannot name cannot be supervised: the sandbox goes, the call is lost
        this.close()
        return this.die()
      }
      this.held.set(pid, own)
      call.events.started(pid)
    } else if (kind === 'F') {
      this.settle(id)
      const errno = ERRNO_NAMES.get(Number(b))
      const why = `${STAGES[a ?? ''] ?? a}: ${rest.join(' ')}${errno ? ` (${errno})` : ''}`
      call.events.failed(new DshError('SPAWN_FAILED', `Cannot start ${call.argv0} in ${call.cwd}: ${why}`, { data: { errno } }))
    } else if (kind === 'X') {
      this.settle(id)
      call.events.exited(a === '-' ? null : Number(a), b === '-' ? null : SIGNAL_NAMES.get(Number(b)) ?? `SIG${b}`)
    }
  }

  private settle(id: number): void {
    if (this.calls.get(id)?.holds && --this.holding === 0) this.link.unref()
    this.calls.delete(id)
    if (!this.busy) this.onIdle()
  }

  private gone(argv0: string, cwd: string): DshError {
    return new DshError('SPAWN_FAILED', `Cannot start ${argv0} in ${cwd}: the ${this.label} exited`, { hint: 'The next command starts a new one.' })
  }

  /** The spawner is gone: every call still in it settles. */
  die(): void {
    if (!this.alive) return
    this.alive = false
    this.channels.close()
    if (this.dir) rmSync(this.dir, { recursive: true, force: true })
    this.held.clear()
    this.onGone()
    const calls = [...this.calls.values()]
    this.calls.clear()
    for (const call of calls) {
      if (!call.started) call.events.failed(this.gone(call.argv0, call.cwd))
      else call.events.lost(new DshError('SUBPROCESS_LOST', `The ${this.label} exited while ${call.argv0} ran: its exit status is unknown and its process group was killed.`, { hint: `The next command starts a new ${this.label}.` }))
    }
  }
}

/**
 * The spawner of a `LocalSubprocess`: started on the first command, restarted after it died.
 * When perl is missing or the spawner cannot start, `get` answers undefined from then on
 * (the caller falls back to Node's own spawn, silently: same results, larger fork).
 */
export class SpawnerPool {
  private instance: Spawner | undefined
  private starting: Promise<Spawner | undefined> | undefined
  private unavailable = false

  constructor(private readonly perlPath: string | undefined) {
    if (!perlPath) this.unavailable = true
  }

  get current(): Spawner | undefined {
    return this.instance?.alive ? this.instance : undefined
  }

  get(): Promise<Spawner | undefined> | Spawner | undefined {
    if (this.unavailable) return undefined
    if (this.instance?.alive) return this.instance
    this.starting ??= Spawner.start(this.perlPath!).then(
      (spawner) => {
        this.starting = undefined
        if (this.unavailable) {
          spawner.close()
          return undefined
        }
        this.instance = spawner
        return spawner
      },
      () => {
        this.starting = undefined
        this.unavailable = true
        return undefined
      },
    )
    return this.starting
  }

  close(): void {
    this.unavailable = true
    this.instance?.close()
    this.instance = undefined
  }
}
