import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Readable, Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { TransportClosedError } from './errors.js'

export interface SpawnOptions {
  /** The program to run (default: `$DSH_BIN`, else the `dsh` of this install, else `dsh` on PATH). */
  command?: string | undefined
  /** Its arguments (default `["sdk"]`). */
  args?: readonly string[] | undefined
  /** The server's environment (default: this process's). */
  env?: Record<string, string | undefined> | undefined
  cwd?: string | undefined
}

const TAIL_BYTES = 16 * 1024
const TAIL_LINES = 20

/** `[command, ...args]` for `dsh sdk`, found as documented on SpawnOptions.command. */
export function resolveCommand(options: SpawnOptions): [string, string[]] {
  const args = [...(options.args ?? ['sdk'])]
  const env = options.env ?? process.env
  if (options.command) return [options.command, args]
  if (env.DSH_BIN) return [env.DSH_BIN, args]
  const installed = installedDsh()
  if (installed) return [process.execPath, [installed, ...args]]
  return ['dsh', args]
}

/** The launcher script of the @dsh/cli next to this package, if this is a dsh install. */
function installedDsh(): string | undefined {
  try {
    const here = dirname(fileURLToPath(import.meta.url))
    for (let dir = here, i = 0; i < 6; i++, dir = dirname(dir)) {
      const bin = join(dir, 'node_modules', '@dsh', 'cli', 'bin', 'dsh.js')
      if (existsSync(bin)) return bin
    }
  } catch {
    // not a file URL (bundled): fall through to PATH
  }
  return undefined
}

/** What the client talks through: the server process, or (in tests) an in-process carrier. */
export interface Transport {
  write(text: string): void
  /** Resolves once the server is gone, with the error pending calls get. */
  readonly exited: Promise<TransportClosedError>
  stop(graceMs: number, killMs: number): Promise<TransportClosedError>
  stderrTail(): string
  readonly pid: number | undefined
}

/**
 * The server process. `exited` resolves once it is gone (with the closed-transport error
 * every pending call gets); `stop` walks the close ladder: EOF on stdin, then SIGTERM,
 * then SIGKILL, each after its wait.
 */
export class ServerProcess implements Transport {
  readonly child: ChildProcessByStdio<Writable, Readable, Readable>
  readonly exited: Promise<TransportClosedError>
  private tail = ''
  private gone = false

  constructor(options: SpawnOptions, onData: (chunk: Buffer) => void) {
    const [command, args] = resolveCommand(options)
    this.child = spawn(command, args, { cwd: options.cwd, env: options.env as NodeJS.ProcessEnv | undefined, stdio: ['pipe', 'pipe', 'pipe'] })
    this.child.stdout.on('data', onData)
    this.child.stderr.setEncoding('utf8').on('data', (text: string) => {
      this.tail = (this.tail + text).slice(-TAIL_BYTES)
    })
    this.child.stdin.on('error', () => undefined)
    this.exited = new Promise((resolve) => {
      let spawnError: Error | undefined
      this.child.on('error', (error) => {
        spawnError = error
        if (this.child.pid === undefined) finish(null, null)
      })
      this.child.on('close', (code, signal) => finish(code, signal))
      const finish = (code: number | null, signal: string | null) => {
        if (this.gone) return
        this.gone = true
        const how = spawnError && this.child.pid === undefined ? `could not start ${command}: ${spawnError.message}` : `the dsh sdk server exited (${signal ? `signal ${signal}` : `code ${code}`})`
        resolve(new TransportClosedError(how, code, signal, this.stderrTail()))
      }
    })
  }

  get pid(): number | undefined {
    return this.child.pid
  }

  /** The last lines the server wrote to stderr. */
  stderrTail(): string {
    const lines = this.tail.split('\n')
    if (lines.at(-1) === '') lines.pop()
    return lines.slice(-TAIL_LINES).join('\n')
  }

  write(text: string): void {
    if (!this.gone && this.child.stdin.writable) this.child.stdin.write(text)
  }

  /** EOF, then SIGTERM after `graceMs`, then SIGKILL after `killMs`. Resolves once the process is gone. */
  async stop(graceMs: number, killMs: number): Promise<TransportClosedError> {
    this.child.stdin.end()
    if (await this.within(graceMs)) return this.exited
    this.child.kill('SIGTERM')
    if (await this.within(killMs)) return this.exited
    this.child.kill('SIGKILL')
    return this.exited
  }

  private async within(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<false>((r) => { timer = setTimeout(() => r(false), ms) })
    const done = await Promise.race([this.exited.then(() => true as const), timeout])
    clearTimeout(timer)
    return done
  }
}
