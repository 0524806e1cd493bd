import { randomBytes } from 'node:crypto'
import { ensureSessionTmp, ensureTmpRoot } from '@dsh/core'
import path from 'node:path'
import { StringDecoder } from 'node:string_decoder'
import { Service, type Context } from '@deepseek-ai/cordis'
import { DshError, type ExecPolicy } from '@dsh/protocol'
import { sandboxedExit } from '../sandbox/exit.js'
import type { SandboxSeam } from '../sandbox/types.js'
import type { SpawnResult, SubprocessSeam } from '../subprocess/types.js'
import { buildEnv, type EnvRules } from './env.js'
import { OutputSink, UnreadBuffer, type SinkLimits } from './output.js'
import { checkCommand, explainSpawnError } from './text.js'
import type { JobInfo, JobOutput, JobStartOptions, ShellRunOptions, ShellRunResult, ShellSeam } from './types.js'

export interface LocalShellOptions extends SinkLimits {
  bashPath: string
  defaultTimeoutMs: number
  env: EnvRules
  /** What the scrubbed environment starts from; default `process.env` (a remote world passes its own, never the host's). */
  baseEnv?: () => Readonly<Record<string, string | undefined>>
  /** The commands' TMPDIR for a policy; default: `policy.tmpRoot` (created here) or the OS temp dir. */
  tmpDir?: (policy: ExecPolicy) => string
  /** Where spill files go; default: the commands' TMPDIR. */
  spillDir?: (policy: ExecPolicy) => string
}

const DENIAL = Buffer.from('Read-only file system')

/**
 * Spots a sandbox refusal in the streamed bytes (the phrase may straddle chunks). Works on
 * bytes, so a command printing gigabytes is scanned without decoding it to strings.
 */
export class DenialDetector {
  found = false
  private carry = Buffer.alloc(0)
  constructor(private readonly active: boolean) {}
  feed(chunk: Buffer): void {
    if (!this.active || this.found) return
    if (chunk.indexOf(DENIAL) !== -1) return void (this.found = true)
    const edge = Buffer.concat([this.carry, chunk.subarray(0, DENIAL.length - 1)])
    if (edge.indexOf(DENIAL) !== -1) return void (this.found = true)
    const joined = chunk.length >= DENIAL.length - 1 ? chunk : edge
    this.carry = Buffer.from(joined.subarray(Math.max(0, joined.length - (DENIAL.length - 1))))
  }
}

/**
 * `onData` gets the stream as text until this many bytes have been passed (the chunk that
 * crosses it included), then nothing more: decoding a runaway stream to strings is what
 * grows the heap (young-generation garbage). 4 MiB is more than 1,000,000 UTF-16 units of
 * any UTF-8 text (≤ 3 bytes per unit), the bash tool's live cap.
 */
export const LIVE_TEXT_BYTES = 4 * 1024 * 1024

interface Job {
  info: JobInfo
  sink: OutputSink
  unread: UnreadBuffer
  detector: DenialDetector
  controller: AbortController
  done: Promise<void>
  result?: SpawnResult
  error?: string
}

/** The local provider of `ctx.shell`. */
export class LocalShell extends Service implements ShellSeam {
  private readonly table = new Map<string, Job>()
  private counter = 0

  constructor(
    ctx: Context,
    private readonly subprocess: SubprocessSeam,
    private readonly sandbox: SandboxSeam,
    private readonly options: LocalShellOptions,
  ) {
    super(ctx, 'shell')
    // Jobs die with the provider; unloading waits until they are gone.
    ctx.effect(() => () => this.killAll())
  }

  private tmpRoot(policy: ExecPolicy): string {
    return policy.tmpRoot ? ensureTmpRoot(policy.tmpRoot) : ensureSessionTmp()
  }

  private async prepare(command: string, policy: ExecPolicy, cwd: string, extra: Record<string, string> | undefined, prefix: string) {
    checkCommand(command)
    const tmp = this.options.tmpDir ? this.options.tmpDir(policy) : this.tmpRoot(policy)
    const spillDir = this.options.spillDir ? this.options.spillDir(policy) : tmp
    const command0 = [this.options.bashPath, '-c', command]
    const { argv, share } = this.sandbox.confine ? await this.sandbox.confine(command0, policy, cwd) : { argv: await this.sandbox.wrap(command0, policy, cwd), share: undefined }
    /** Confined (argv changed): a signal death reads as exit 128+N (sandboxedExit). */
    const wrapped = argv.length !== 3 || argv[0] !== this.options.bashPath
    const env = buildEnv(this.options.baseEnv ? this.options.baseEnv() : process.env, tmp, this.options.env, extra)
    const spill = () => path.join(spillDir, `${prefix}-${Date.now()}-${randomBytes(4).toString('hex')}.log`)
    const sink = new OutputSink(this.options, spill)
    return { argv, share, wrapped, env, sink, detector: new DenialDetector(policy.mode !== 'danger-full-access') }
  }

  async run(command: string, options: ShellRunOptions): Promise<ShellRunResult> {
    const cwd = options.cwd ?? options.policy.cwd
    const { argv, share, wrapped, env, sink, detector } = await this.prepare(command, options.policy, cwd, options.env, 'dsh-bash')
    const decoder = new StringDecoder('utf8')
    const timeoutMs = options.timeoutMs ?? this.options.defaultTimeoutMs
    let live = 0
    let result: SpawnResult
    try {
      result = await this.subprocess.run(argv, {
        cwd,
        env,
        timeoutMs,
        ...(share ? { share } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        reuseBuffer: true,
        onData: (chunk) => {
          sink.write(chunk)
          detector.feed(chunk)
          if (!options.onData || live > LIVE_TEXT_BYTES) return
          live += chunk.length
          const text = decoder.write(chunk)
          if (text) options.onData(text)
        },
      })
    } catch (error) {
      throw explainSpawnError(error, command)
    } finally {
      sink.close()
    }
    const { output, truncation } = sink.finish()
    const exit = wrapped ? sandboxedExit(result) : result
    return {
      output,
      exitCode: exit.exitCode,
      signal: exit.signal,
      ...(result.timedOut ? { timedOutMs: timeoutMs } : {}),
      aborted: result.aborted,
      sandboxDenied: detector.found,
      ...(truncation ? { truncation } : {}),
      mode: options.policy.mode,
    }
  }

  async start(command: string, options: JobStartOptions): Promise<JobInfo> {
    const cwd = options.cwd ?? options.policy.cwd
    const id = `job-${++this.counter}`
    const { argv, share, wrapped, env, sink, detector } = await this.prepare(command, options.policy, cwd, options.env, `dsh-${id}`)
    const unread = new UnreadBuffer(this.options.maxBytes)
    const controller = new AbortController()
    const info: JobInfo = {
      id, command, cwd, mode: options.policy.mode, startedAt: Date.now(),
      ...(options.owner !== undefined ? { owner: options.owner } : {}),
    }
    const job: Job = { info, sink, unread, detector, controller, done: Promise.resolve() }
    // the job's info carries its pid: returned once the process is spawned (or failed to)
    let spawned = () => {}
    const started = new Promise<void>((resolve) => { spawned = resolve })
    job.done = this.subprocess.run(argv, {
      cwd,
      env,
      ...(share ? { share } : {}),
      signal: controller.signal,
      reuseBuffer: true,
      onSpawn: (pid) => {
        info.pid = pid
        spawned()
      },
      onData: (chunk) => {
        sink.write(chunk)
        unread.write(chunk)
        detector.feed(chunk)
      },
    }).then(
      (result) => { job.result = wrapped ? { ...result, ...sandboxedExit(result) } : result },
      (error: unknown) => { job.error = (explainSpawnError(error, command) as Error).message },
    ).finally(() => {
      sink.close()
      spawned()
    })
    this.table.set(id, job)
    await started
    return { ...info }
  }

  private find(jobId: string, owner: string | undefined): Job {
    const job = this.table.get(jobId)
    if (!job || (owner !== undefined && job.info.owner !== owner)) {
      const known = this.jobs(owner).map((j) => j.id)
      throw new DshError('JOB_NOT_FOUND', `No background job ${jobId}.${known.length ? ` Known jobs: ${known.join(', ')}.` : ' There are no background jobs.'}`)
    }
    return job
  }

  output(jobId: string, owner?: string): JobOutput {
    const job = this.find(jobId, owner)
    const { text, dropped } = job.unread.take()
    const running = !job.result && job.error === undefined
    const spillPath = job.sink.spilled
    return {
      id: job.info.id,
      command: job.info.command,
      running,
      output: text,
      droppedBytes: dropped,
      ...(spillPath ? { spillPath } : {}),
      exitCode: job.result?.exitCode ?? null,
      signal: job.result?.signal ?? null,
      sandboxDenied: job.detector.found,
      ...(job.error !== undefined ? { error: job.error } : {}),
    }
  }

  async kill(jobId: string, owner?: string): Promise<JobOutput> {
    const job = this.find(jobId, owner)
    job.controller.abort()
    await job.done
    return this.output(jobId, owner)
  }

  /** The jobs `owner` may see (all of them when no owner is given). */
  private owned(owner: string | undefined): Job[] {
    return [...this.table.values()].filter((j) => owner === undefined || j.info.owner === owner)
  }

  jobs(owner?: string): JobInfo[] {
    return this.owned(owner).map((j) => ({ ...j.info }))
  }

  async killAll(owner?: string): Promise<void> {
    const jobs = this.owned(owner)
    for (const job of jobs) job.controller.abort()
    await Promise.all(jobs.map((j) => j.done))
  }
}
