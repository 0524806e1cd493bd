import { spawn, type ChildProcess } from 'node:child_process'
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

export interface StdioLaunch {
  command: string
  args: readonly string[]
  /** Added to the SDK's safe default environment (HOME, LOGNAME, PATH, SHELL, TERM, USER). */
  env: Readonly<Record<string, string>>
  cwd?: string
  /** Between closing stdin and SIGTERM, and between SIGTERM and SIGKILL. */
  killGraceMs: number
  /** How many characters of the child's stderr are kept (the tail). */
  stderrLimit: number
}

/** How the child ended: `code` null means it died of `signal`. */
export interface ProcessExit { code: number | null; signal: string | null }

/** Keeps the last `limit` characters written to it. */
export class TextTail {
  private text = ''
  private dropped = false
  constructor(private readonly limit: number) {}

  push(chunk: string): void {
    this.text += chunk
    if (this.text.length > this.limit) {
      this.text = this.text.slice(this.text.length - this.limit)
      this.dropped = true
    }
  }

  /** The kept text, trimmed; prefixed with `…` when older output was dropped. */
  toString(): string {
    const kept = this.text.trim()
    return kept && this.dropped ? `…${kept}` : kept
  }
}

const live = new Set<StdioProcessTransport>()
let exitHookInstalled = false

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, signal)
  } catch {
    // the group is gone already
  }
}

/** SIGKILLs every server group still running when this process exits (no orphans on a hard exit). */
function installExitHook(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on('exit', () => {
    for (const transport of live) transport.kill()
  })
}

const within = (promise: Promise<unknown>, ms: number): Promise<boolean> =>
  Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())])

/**
 * MCP over a child's stdin/stdout, framed by the SDK's own `ReadBuffer`/`serializeMessage`.
 * It differs from the SDK's `StdioClientTransport` where dsh needs it to: the child
 * leads its own process group, so closing it (stdin EOF → SIGTERM → SIGKILL, each after
 * `killGraceMs`) and its exit reach whatever it spawned; its exit code or signal is kept
 * (`exit`) for the messages that explain a failure; stderr is captured into a bounded
 * tail (`stderr`) instead of being inherited.
 */
export class StdioProcessTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  /** Set when the child has exited. */
  exit: ProcessExit | undefined
  readonly stderr: TextTail
  private child: ChildProcess | undefined
  private readonly reader = new ReadBuffer()
  private closed = false
  private closing: Promise<void> | undefined
  private readonly closedSignal: Promise<void>
  private markClosed!: () => void

  constructor(private readonly launch: StdioLaunch) {
    this.stderr = new TextTail(launch.stderrLimit)
    this.closedSignal = new Promise((resolve) => { this.markClosed = resolve })
  }

  /** The child's pid (= its process group id), once spawned. */
  get pid(): number | undefined {
    return this.child?.pid
  }

  start(): Promise<void> {
    if (this.child) return Promise.reject(new Error('StdioProcessTransport already started'))
    installExitHook()
    return new Promise((resolve, reject) => {
      let spawned = false
      const child = spawn(this.launch.command, [...this.launch.args], {
        env: { ...getDefaultEnvironment(), ...this.launch.env },
        ...(this.launch.cwd ? { cwd: this.launch.cwd } : {}),
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        shell: false,
      })
      this.child = child
      live.add(this)
      child.on('error', (error) => {
        if (!spawned) {
          this.finish()
          reject(error)
        } else {
          this.onerror?.(error)
        }
      })
      child.once('spawn', () => {
        spawned = true
        resolve()
      })
      child.once('exit', (code, signal) => {
        this.exit = { code, signal }
        // Whatever the server left in its group goes with it.
        killGroup(child.pid, 'SIGKILL')
      })
      child.once('close', () => this.finish())
      child.stdout?.on('data', (chunk: Buffer) => {
        try {
          this.reader.append(chunk)
        } catch (error) {
          // An over-long message: the stream cannot be resynchronised.
          this.onerror?.(error as Error)
          void this.close()
          return
        }
        for (;;) {
          let message: JSONRPCMessage | null
          try {
            message = this.reader.readMessage()
          } catch (error) {
            this.onerror?.(error as Error)
            continue
          }
          if (message === null) break
          this.onmessage?.(message)
        }
      })
      child.stderr?.setEncoding('utf8')
      child.stderr?.on('data', (chunk: string) => this.stderr.push(chunk))
      child.stdin?.on('error', (error) => this.onerror?.(error))
    })
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin
      if (!stdin || this.closed || this.exit || !stdin.writable) {
        reject(new Error('not connected: the server process is not running'))
        return
      }
      if (stdin.write(serializeMessage(message))) resolve()
      else stdin.once('drain', resolve)
    })
  }

  /** Ends the child: stdin EOF, then SIGTERM, then SIGKILL to its group. Resolves once it is gone (or after the last grace). */
  close(): Promise<void> {
    this.closing ??= this.shutdown()
    return this.closing
  }

  /** SIGKILLs the group now (synchronous; for process exit). */
  kill(): void {
    if (!this.closed) killGroup(this.child?.pid, 'SIGKILL')
  }

  private async shutdown(): Promise<void> {
    const child = this.child
    if (!child || this.closed) return
    const grace = this.launch.killGraceMs
    child.stdin?.end()
    if (await within(this.closedSignal, grace)) return
    killGroup(child.pid, 'SIGTERM')
    if (await within(this.closedSignal, grace)) return
    killGroup(child.pid, 'SIGKILL')
    await within(this.closedSignal, grace)
  }

  private finish(): void {
    if (this.closed) return
    this.closed = true
    live.delete(this)
    this.reader.clear()
    this.markClosed()
    this.onclose?.()
  }
}
