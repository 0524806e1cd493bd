export interface SpawnOptions {
  cwd: string
  /** The full environment of the child (nothing is inherited implicitly). Default: `process.env`. */
  env?: Record<string, string | undefined>
  /** After this long the group gets SIGTERM, then SIGKILL after the grace period. */
  timeoutMs?: number
  /** Abort → the same SIGTERM/SIGKILL sequence. */
  signal?: AbortSignal
  /** stdout and stderr, merged in the order the child wrote them. */
  onData?: (chunk: Buffer) => void
  /**
   * `onData`'s chunk may be a view into a buffer reused for the next read (valid during the
   * call only: copy what you keep). Lets a loud command's output pass without allocating a
   * buffer per chunk. Default false: each chunk is the caller's to keep.
   */
  reuseBuffer?: boolean
  /** Called once with the pid (= the process group id) right after the spawn. */
  onSpawn?: (pid: number) => void
  /** Between SIGTERM and SIGKILL; default from the provider's config (2 s). */
  killGraceMs?: number
  /**
   * `argv` is `share.command` confined per call by a sandbox of `share.skeleton`. A provider
   * that keeps such a sandbox alive may run `share.command` in it instead (0092); one that
   * does not runs `argv`, so ignoring this never runs a command unconfined.
   */
  share?: SandboxShare
}

/**
 * A per-call sandbox's launch, split so one sandbox can serve many calls: the mechanism's
 * argv up to the command's working directory (`skeleton`), the file its fd 3 must be
 * (bubblewrap's seccomp program), and `identity` — what the skeleton's paths were (inodes)
 * when it was computed. Two calls may share a sandbox only when all three are equal.
 */
export interface SandboxShare {
  skeleton: readonly string[]
  fd3?: string
  identity: string
  command: readonly string[]
}

export interface SpawnResult {
  /** Null when the leader died of a signal (or never ran). */
  exitCode: number | null
  /** The signal that ended the leader, e.g. `SIGTERM`. */
  signal: string | null
  timedOut: boolean
  aborted: boolean
}

/**
 * The process seam. `run` spawns `argv` in a new process group (and session) with stdin
 * closed and stdout+stderr merged into one ordered stream. A timeout or abort sends
 * SIGTERM to the whole group, then SIGKILL after the grace period. When the leader exits,
 * whatever it left in its group is terminated the same way, so no orphan survives the
 * call (a process that leaves the group itself, e.g. by `setsid`, is out of reach).
 * Rejects with SPAWN_FAILED when the process cannot be started (a missing or non-executable
 * program, a bad cwd — `data.errno` names the reason — or NUL in argv, env or cwd), and with
 * SUBPROCESS_LOST when the local spawner (0080) died while the command ran: its exit status
 * is unknown and its group has been SIGKILLed.
 */
export interface SubprocessSeam {
  run(argv: string[], options: SpawnOptions): Promise<SpawnResult>
}

declare module '@deepseek-ai/cordis' {
  interface Context {
    subprocess: SubprocessSeam
  }
}
