import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import type { Socket } from 'node:net'
import { constants, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable, Writable } from 'node:stream'
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

type SpawnerProcess = ChildProcessByStdio<Writable, Readable, Readable>

/**
 * One running spawner (`spawner-script.ts`) and its channel factory (channels connect to
 * the spawner's socket). Start with `Spawner.start`; `alive` turns false once it exited, and
 * every call still in it then settles (`failed` before the exec, `lost` after).
 */
export class Spawner {
  readonly channels: ChannelFactory
  alive = true
  private nextId = 1
  private readonly calls = new Map<number, { events: LaunchEvents; started: boolean; argv0: string; cwd: string }>()
  private lineBuffer = ''

  private constructor(private readonly child: SpawnerProcess, private readonly dir: string, socketPath: string) {
    this.channels = new ChannelFactory(socketPath)
    child.stdout.on('data', (data: Buffer) => this.onOutput(data))
    child.stdout.once('close', () => this.die())
    child.once('exit', () => this.die())
    child.stdin.on('error', () => this.die())
    socketOf(child.stdout).unref()
    child.unref()
  }

  /** The spawner's pid (for tests that kill it). */
  get pid(): number | undefined {
    return this.child.pid
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
        const spawner = new Spawner(child, dir, socketPath)
        const rest = data.subarray(2)
        if (rest.length > 0) spawner.onOutput(rest)
        resolve(spawner)
      })
    })
  }

  /**
   * Asks the spawner to run `argv` with `channel` as its stdout+stderr. Fields must be free of
   * NUL (the caller checks). Events follow on `events`.
   */
  launch(argv: string[], cwd: string, env: Record<string, string | undefined>, channel: Channel, events: LaunchEvents): void {
    const id = this.nextId++
    if (!this.alive) return events.failed(this.gone(argv[0]!, cwd))
    const envEntries = Object.entries(env).flatMap(([key, value]) => (value === undefined ? [] : [`${key}=${value}`]))
    this.calls.set(id, { events, started: false, argv0: argv[0]!, cwd })
    socketOf(this.child.stdout).ref()
    this.send(['run', String(id), channel.token, cwd, String(argv.length), ...argv, ...envEntries])
  }

  /** The call for group `pgid` settled: the spawner forgets the group (it kills remembered groups when dsh dies). */
  release(pgid: number): void {
    if (this.alive) this.send(['done', String(pgid)])
  }

  /** Ends the spawner: it sees EOF, SIGKILLs the groups it still knows and exits. */
  close(): void {
    this.channels.close()
    this.child.stdin.destroy()
    rmSync(this.dir, { recursive: true, force: true })
  }

  private send(fields: string[]): void {
    const payload = Buffer.from(fields.join('\0'), 'utf8')
    const frame = Buffer.allocUnsafe(4 + payload.length)
    frame.writeUInt32BE(payload.length, 0)
    payload.copy(frame, 4)
    this.child.stdin.write(frame)
  }

  private onOutput(data: Buffer): void {
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
      call.started = true
      call.events.started(Number(a))
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
    this.calls.delete(id)
    if (this.calls.size === 0) socketOf(this.child.stdout).unref()
  }

  private gone(argv0: string, cwd: string): DshError {
    return new DshError('SPAWN_FAILED', `Cannot start ${argv0} in ${cwd}: the process spawner exited`, { hint: 'The next command starts a new one.' })
  }

  private die(): void {
    if (!this.alive) return
    this.alive = false
    this.channels.close()
    rmSync(this.dir, { recursive: true, force: true })
    const calls = [...this.calls.values()]
    this.calls.clear()
    for (const call of calls) {
      if (!call.started) call.events.failed(this.gone(call.argv0, call.cwd))
      else call.events.lost(new DshError('SUBPROCESS_LOST', `The process spawner exited while ${call.argv0} ran: its exit status is unknown and its process group was killed.`, { hint: 'The next command starts a new spawner.' }))
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
