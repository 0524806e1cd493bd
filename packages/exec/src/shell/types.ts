import type { ExecPolicy, SandboxMode } from '@dsh/protocol'
import type { Truncation } from './render.js'

export interface ShellRunOptions {
  policy: ExecPolicy
  /** Default: `policy.cwd`. */
  cwd?: string
  /** Added to the scrubbed environment (trusted: applied last). */
  env?: Record<string, string>
  /** Default from the provider's config; 0 disables it. */
  timeoutMs?: number
  signal?: AbortSignal
  /** The merged stream as text, as it arrives, for live UIs: its first 4 MiB or so (`LIVE_TEXT_BYTES`), then nothing; the result holds the tail. */
  onData?: (text: string) => void
}

export interface ShellRunResult {
  /** The whole output, or its tail when `truncation` is set. */
  output: string
  exitCode: number | null
  signal: string | null
  /** The timeout that fired, if it did. */
  timedOutMs?: number
  aborted: boolean
  /** The output reports a write refused by the sandbox ("Read-only file system"). */
  sandboxDenied: boolean
  truncation?: Truncation
  /** The sandbox mode the command actually ran under. */
  mode: SandboxMode
}

export interface JobStartOptions {
  policy: ExecPolicy
  cwd?: string
  env?: Record<string, string>
  /** Who may see the job (e.g. a session id); other owners get JOB_NOT_FOUND. */
  owner?: string
}

export interface JobInfo {
  id: string
  command: string
  cwd: string
  owner?: string
  pid?: number
  mode: SandboxMode
  startedAt: number
}

export interface JobOutput {
  id: string
  command: string
  running: boolean
  /** Output since the previous read (its tail when `droppedBytes` > 0). */
  output: string
  /** Unread bytes that no longer fit in memory; the spill file has them. */
  droppedBytes: number
  /** The file holding the job's whole output, once it outgrew memory. */
  spillPath?: string
  exitCode: number | null
  signal: string | null
  sandboxDenied: boolean
  /** Why the job could not run, if it could not. */
  error?: string
}

/**
 * The shell seam: a fresh non-login, non-interactive `bash -c` per command, confined by
 * the sandbox seam under the call's policy, with a scrubbed environment and bounded
 * output. Throws SANDBOX_UNAVAILABLE (never runs unconfined by surprise) and
 * JOB_NOT_FOUND. Jobs die with the provider.
 */
export interface ShellSeam {
  run(command: string, options: ShellRunOptions): Promise<ShellRunResult>
  start(command: string, options: JobStartOptions): Promise<JobInfo>
  /** New output since the last read, and the status. */
  output(jobId: string, owner?: string): JobOutput
  /** SIGTERM then SIGKILL to the job's group; resolves once it is gone, with its last output. */
  kill(jobId: string, owner?: string): Promise<JobOutput>
  jobs(owner?: string): JobInfo[]
  killAll(owner?: string): Promise<void>
}

declare module '@deepseek-ai/cordis' {
  interface Context {
    shell: ShellSeam
  }
}
