import type { ExecPolicy } from '@dsh/protocol'
import type { SandboxShare, SubprocessSeam } from '../subprocess/types.js'

/** What the sandbox seam found on this machine (probed once, then cached). */
export interface SandboxStatus {
  /** The working mechanism, or null when none works. */
  mechanism: string | null
  /** Why each tried mechanism failed, or what works. */
  detail: string
}

/**
 * One way to confine a process (bubblewrap now; Landlock or macOS seatbelt later).
 * `wrap` is pure: argv in, confined argv out, for read-only or workspace-write.
 */
export interface SandboxMechanism {
  readonly name: string
  /** Runs the mechanism for real (e.g. `bwrap … true`); `ok: false` with the reason when it does not work. */
  probe(subprocess: SubprocessSeam): Promise<{ ok: true } | { ok: false; reason: string }>
  wrap(argv: string[], policy: ExecPolicy, cwd: string, confine?: Confinement): string[]
  /** The same confinement as `wrap`, split for a sandbox shared between calls (absent: never shared). */
  share?(argv: string[], policy: ExecPolicy, confine: Confinement, identity: string): SandboxShare
}

/** Per-file exceptions applied on top of the policy's mounts (paths exist and are real). */
export interface Confinement {
  /** Made unreadable inside (an empty file bound over each): dsh's secret files. */
  masked?: readonly string[]
  /** Made empty and read-only inside (an empty read-only tmpfs over each): directories every file of which, present or future, is secret. */
  hiddenDirs?: readonly string[]
  /** Made read-only inside although under a writable root: hard links to files outside the roots, or directories of them. */
  readOnly?: readonly string[]
  /** Made writable again inside a `readOnly` directory (mounted after it): files and directories holding no outside link. */
  writable?: readonly string[]
}

/**
 * The sandbox seam. `wrap` returns `argv` unchanged under danger-full-access; otherwise
 * the argv confined by the working mechanism, or SANDBOX_UNAVAILABLE (never unconfined
 * by surprise). Confined commands cannot read dsh's secret files (they are masked), and
 * under workspace-write a hard link in a writable root to a file outside is read-only.
 */
export interface SandboxSeam {
  probe(): Promise<SandboxStatus>
  wrap(argv: string[], policy: ExecPolicy, cwd?: string): Promise<string[]>
  /** `wrap`'s argv, and (when the mechanism can share one sandbox between calls) the same confinement split for `SpawnOptions.share`. */
  confine?(argv: string[], policy: ExecPolicy, cwd?: string): Promise<{ argv: string[]; share?: SandboxShare }>
}

declare module '@deepseek-ai/cordis' {
  interface Context {
    sandbox: SandboxSeam
  }
}
