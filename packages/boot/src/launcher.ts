import { Service, type Context } from '@deepseek-ai/cordis'
import { formatError, type LauncherSignal } from '@dsh/protocol'

/**
 * `ctx.launcher`: what the `dsh` process gives the tree. Provided at the root by
 * the launcher before any row mounts.
 *
 * Contract for a surface plugin: in `apply`, call `hold()` synchronously (that
 * claims the process; without a holder the launcher exits once the tree has
 * settled), return promptly, do the work in the background (await `ready` first
 * if it needs the whole tree), and end with `exit(code)` — or call the release
 * function, after which the launcher exits once nothing holds it. `argv` is the
 * command line without the launcher's own flags (taken anywhere before `--`; see
 * @dsh/cli args.ts), in order; everything after `--` is kept as given.
 */
export interface LauncherInit {
  argv: readonly string[]
  home: string
  profile: string
  cwd: string
  env: Record<string, string | undefined>
  version: string
  /** Or a function giving it on first use (`process.stdin` makes a stream when first read: 0095). */
  stdin: NodeJS.ReadableStream | (() => NodeJS.ReadableStream)
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
}

export { signalExitCode, type LauncherSignal } from '@dsh/protocol'

declare module '@deepseek-ai/cordis' {
  interface Context {
    launcher: Launcher
  }
  interface Events {
    /** The process got SIGINT/SIGTERM/SIGHUP (its terminal closed). A holding surface should wind down and call `exit()` (with `signalExitCode`). */
    'launcher/signal'(signal: LauncherSignal): void
  }
}

export class Launcher extends Service {
  readonly argv: readonly string[]
  readonly home: string
  readonly profile: string
  readonly cwd: string
  readonly env: Record<string, string | undefined>
  readonly version: string
  readonly stdout: NodeJS.WritableStream
  readonly stderr: NodeJS.WritableStream
  /** Resolves once every row has been mounted and the tree has settled. */
  readonly ready: Promise<void>
  /** Resolves with the exit code once `exit()` was called (the launcher waits on it). */
  readonly exited: Promise<number>

  private _holds = 0
  private readonly _pins = new Set<{ reason: string }>()
  private _exitCode: number | undefined
  private _resolveReady!: () => void
  private _resolveExit!: (code: number) => void
  private _onIdle: (() => void) | undefined
  private _stdin: NodeJS.ReadableStream | (() => NodeJS.ReadableStream)

  constructor(ctx: Context, init: LauncherInit) {
    super(ctx, 'launcher')
    this.argv = Object.freeze([...init.argv])
    this.home = init.home
    this.profile = init.profile
    this.cwd = init.cwd
    this.env = init.env
    this.version = init.version
    this._stdin = init.stdin
    this.stdout = init.stdout
    this.stderr = init.stderr
    this.ready = new Promise((r) => { this._resolveReady = r })
    this.exited = new Promise((r) => { this._resolveExit = r })
  }

  get stdin(): NodeJS.ReadableStream {
    if (typeof this._stdin === 'function') this._stdin = this._stdin()
    return this._stdin
  }

  /**
   * Pins the tree: while pinned, edits of the patch files are not applied (each is
   * reported with `reason`). A surface serving a long-lived client (ACP) pins, because a
   * reload that restarts a row it depends on would cut the client off mid-session.
   * Tied to the caller's fiber like `hold()`.
   */
  pin(reason: string): () => void {
    const entry = { reason }
    this._pins.add(entry)
    return this.tieToCaller(() => { this._pins.delete(entry) }, 'launcher.pin()')
  }

  /** Why the tree is pinned (empty when reloads apply). */
  get pins(): string[] {
    return [...this._pins].map((p) => p.reason)
  }

  /**
   * Claims the process. The returned function releases the claim (idempotent);
   * unloading the plugin that called `hold()` releases it too.
   */
  hold(): () => void {
    this._holds++
    let released = false
    return this.tieToCaller(() => {
      if (released) return
      released = true
      this._holds--
      if (this._holds === 0) this._onIdle?.()
    }, 'launcher.hold()')
  }

  /**
   * The one-shot surface's whole contract in one call: claims the process now (call it in
   * `apply`), runs `task` in the background and exits with the code it resolves to; a
   * rejection is printed as `CODE: message` and exits 1.
   */
  runToExit(task: () => Promise<number>): void {
    const release = this.hold()
    task().then((code) => {
      release()
      this.exit(code)
    }, (error: unknown) => {
      this.stderr.write(formatError(error) + '\n')
      release()
      this.exit(1)
    })
  }

  /**
   * Called through `ctx.launcher`, `this.ctx` is the caller's context: `undo` becomes an
   * effect of the caller's fiber, so a disposed surface cannot keep its claim. Returns
   * the function that runs `undo` early (plain `undo` when no effect can be made).
   */
  private tieToCaller(undo: () => void, label: string): () => void {
    try {
      const dispose = this.ctx.effect(() => undo, label)
      return () => { void dispose() }
    } catch {
      return undo
    }
  }

  /** How many claims are live. */
  get holds(): number {
    return this._holds
  }

  /** Asks the launcher to unwind the tree and exit with `code`. The first call wins. */
  exit(code: number): void {
    if (this._exitCode !== undefined) return
    this._exitCode = code
    this._resolveExit(code)
  }

  /** The code passed to the first `exit()`, if any. */
  get exitCode(): number | undefined {
    return this._exitCode
  }

  /** Launcher side: the tree has settled. */
  markReady(): void {
    this._resolveReady()
  }

  /** Launcher side: called whenever the last claim is released. */
  onIdle(callback: () => void): void {
    this._onIdle = callback
  }
}
