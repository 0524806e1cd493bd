import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs'
import path from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import type { Session } from '@dsh/core'
import { DshError, formatError, isDshError, signalExitCode, type Usage } from '@dsh/protocol'
import type { WorldService } from '../service.js'
import { formatTarget, parseWorldUrl } from '../url.js'
import { BATCH_USAGE, parseBatchArgs, type BatchArgs } from './args.js'
import { parseHosts, parseTasks, readResults, type Task, type TaskResult } from './input.js'
import { HostPool, type Slot } from './pool.js'

const EXIT = { completed: 0, failed: 1, usage: 2 } as const
/** The message that continues an interrupted task's session. */
export const CONTINUE_PROMPT = 'The previous run of this task was interrupted. Check what was already done, then finish the task.'

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    throw new DshError('USAGE', `cannot read the ${what} ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
  }
}

/** An append-only JSONL file; each line is fsynced before `append` returns. */
class Appender {
  private readonly fd: number
  constructor(file: string) {
    this.fd = openSync(file, 'a', 0o644)
  }
  append(row: unknown): void {
    writeSync(this.fd, JSON.stringify(row) + '\n')
    fsyncSync(this.fd)
  }
  close(): void {
    closeSync(this.fd)
  }
}

function usageSince(session: Session, fromSeq: number): TaskResult['usage'] {
  let inputTokens = 0
  let outputTokens = 0
  for (const e of session.events) {
    if (e.seq < fromSeq || e.type !== 'assistant/message') continue
    const usage = (e.data as { usage?: Usage }).usage
    inputTokens += usage?.inputTokens ?? 0
    outputTokens += usage?.outputTokens ?? 0
  }
  return { inputTokens, outputTokens }
}

/**
 * `dsh batch`: runs a task list concurrently in this one tree (one session and agent per
 * task), each task in its own world: a local directory, or a directory under a pool
 * host's root. Results are appended (fsynced) to the results file as tasks finish; a
 * re-run skips completed ids and continues interrupted sessions. A host that fails
 * (unreachable, host key changed, dropped mid-task) fails its task and leaves the pool.
 * Ctrl-C cancels every running task (their sessions close, remote jobs are killed); they
 * get no result line, so the next run resumes them.
 */
export async function runBatch(ctx: Context): Promise<number> {
  const { launcher } = ctx
  const err = (line: string) => launcher.stderr.write(line + '\n')
  let args: BatchArgs
  try {
    args = parseBatchArgs(launcher.argv)
  } catch (error) {
    err(formatError(error))
    return EXIT.usage
  }
  if (args.help) {
    launcher.stdout.write(BATCH_USAGE + '\n')
    return EXIT.completed
  }
  const cwd = launcher.cwd
  const tasksFile = path.resolve(cwd, args.tasks)
  const outFile = path.resolve(cwd, args.out ?? tasksFile.replace(/(\.jsonl)?$/, '.results.jsonl'))
  let list, hosts, state
  try {
    list = parseTasks(readText(tasksFile, 'task list'))
    for (const problem of list.problems) err(`${args.tasks}: ${problem}`)
    if (list.problems.length && !args.keepGoing) {
      throw new DshError('BATCH_TASKS', `${args.tasks}: ${list.problems.length} invalid line(s); nothing was started`, { hint: 'fix them, or pass --keep-going to run the valid lines' })
    }
    hosts = args.hosts ? parseHosts(readText(path.resolve(cwd, args.hosts), 'hosts file'), args.hosts) : undefined
    state = existsSync(outFile) ? readResults(readFileSync(outFile, 'utf8'), list, outFile) : { done: new Set<string>(), sessions: new Map<string, string>() }
    // A task's workspace stays under the host's root, or locally under the current directory:
    // never an absolute path, never `..` (ids are plain names, checked by the task schema).
    for (const t of list.tasks) {
      if (t.workspace && (path.posix.isAbsolute(t.workspace) || t.workspace.split('/').includes('..'))) {
        throw new DshError('BATCH_TASKS', `task ${t.id}: workspace must be a relative path under ${hosts ? "the host's root" : 'the current directory'}, got "${t.workspace}"`, {
          hint: 'give the task a "workspace" such as "./name"; run dsh in another directory for tasks there',
        })
      }
    }
  } catch (error) {
    err(formatError(error))
    return EXIT.usage
  }
  if (!ctx.get('worlds') || !ctx.get('presets')) await launcher.ready
  if (hosts && !ctx.get('worlds')) {
    err(formatError(new DshError('USAGE', '--hosts needs the worlds row (@dsh/world-ssh/world)')))
    return EXIT.usage
  }
  const results = new Appender(outFile)
  if (!existsSync(outFile) || readFileSync(outFile, 'utf8') === '') results.append({ batch: { digest: list.digest, tasks: list.tasks.length } })
  const pending = list.tasks.filter((t) => !state.done.has(t.id))
  if (pending.length < list.tasks.length) err(`batch: ${list.tasks.length - pending.length} task(s) already completed in ${path.basename(outFile)}`)

  const pool = hosts ? new HostPool(hosts) : undefined
  const slots = hosts ? hosts.reduce((n, h) => n + h.slots, 0) : Infinity
  const parallel = Math.min(args.parallel, slots, Math.max(pending.length, 1))
  const running = new Map<string, { cancel(): void }>()
  const started = Date.now()
  let done = 0
  let failed = 0
  /** The exit code of the signal that stopped the batch (128 + its number); unset while none came. */
  let interrupted: number | undefined
  const progress = () => {
    const minutes = (Date.now() - started) / 60_000
    const rate = minutes > 0 ? ((done + failed) / minutes).toFixed(1) : '0.0'
    err(`batch: ${done}/${pending.length} done, ${running.size} running, ${failed} failed, ${rate} tasks/min`)
  }
  const disposeSignal = ctx.on('launcher/signal', (signal) => {
    interrupted = signalExitCode(signal)
    for (const r of running.values()) r.cancel()
    return true
  })
  const settings = ctx.settings.get()
  // an optional row (not injected): a local-only batch runs without it
  const worlds = ctx.get('worlds') as WorldService | undefined

  const runTask = async (task: Task, slot: Slot | undefined): Promise<TaskResult | undefined> => {
    const t0 = Date.now()
    const resumeId = state.sessions.get(task.id)
    let session: Session | undefined
    let hostError: DshError | undefined
    let host: string | null = null
    const base = { id: task.id, text: '', usage: { inputTokens: 0, outputTokens: 0 } }
    let agent: { cancel(): void; followup(p: string): Promise<{ reason: string; text: string; error?: { code: string; message: string } }> } | undefined
    const entry = { cancel: () => agent?.cancel() }
    running.set(task.id, entry)
    try {
      const rel = task.workspace ?? task.id
      let spec
      let workspace: string
      if (slot) {
        const target = parseWorldUrl(slot.host.url)
        workspace = path.posix.join(target.root, rel)
        host = formatTarget(target)
        spec = { url: formatTarget(target, workspace), ...(slot.host.identity ?? args.identity ? { identity: slot.host.identity ?? args.identity } : {}),
          ...(slot.host.knownHosts ?? args.knownHosts ? { knownHosts: slot.host.knownHosts ?? args.knownHosts } : {}) }
        spec = worlds!.spec(spec, undefined, cwd)
      } else {
        workspace = path.resolve(cwd, rel)
        mkdirSync(workspace, { recursive: true })
      }
      session = resumeId ? await ctx.sessions.open(resumeId).catch(() => undefined) : undefined
      const resumed = !!session
      session ??= await ctx.sessions.create({ cwd: workspace })
      if (!resumed) results.append({ start: { id: task.id, sessionId: session.id } })
      if (spec) {
        try {
          const world = resumed && session.last('world/select') ? await worlds!.attach(session) : await worlds!.select(session, spec, { createRoot: true })
          world?.conn.onLost((error) => { hostError ??= error; agent?.cancel() })
        } catch (error) {
          hostError = isDshError(error) ? error : new DshError('WORLD_UNREACHABLE', String(error))
          throw hostError
        }
      }
      const mode = task.permissionMode ?? (resumed ? undefined : settings.permissionMode)
      if (mode) ctx.permission.set(session, mode)
      else if (!session.last('permission/preset')) ctx.permission.set(session, ctx.permission.current(session).id)
      ctx.permission.policy(session)
      const fromSeq = session.events.length
      const created = ctx.agents.create(session, { ...(task.model ? { model: task.model } : {}) })
      agent = created
      if (interrupted) created.cancel()
      const outcome = await created.followup(resumed ? CONTINUE_PROMPT : task.prompt)
      const usage = usageSince(session, fromSeq)
      if (hostError) return { ...base, sessionId: session.id, reason: 'host-failed', usage, wallMs: Date.now() - t0, host, error: { code: hostError.code, message: hostError.message } }
      if (outcome.reason === 'aborted' && interrupted) return undefined
      return { ...base, sessionId: session.id, reason: outcome.reason, text: outcome.text, usage, wallMs: Date.now() - t0, host, ...(outcome.error ? { error: { code: outcome.error.code, message: outcome.error.message } } : {}) }
    } catch (error) {
      const e = isDshError(error) ? error : new DshError('BATCH_TASK', (error as Error).message ?? String(error))
      return { ...base, sessionId: session?.id ?? null, reason: hostError ? 'host-failed' : 'error', wallMs: Date.now() - t0, host, error: { code: e.code, message: e.message } }
    } finally {
      running.delete(task.id)
      if (hostError && slot && pool) pool.fail(slot)
      if (session) {
        ctx.agents.remove(session.id)
        await session.close().catch(() => undefined)
      }
    }
  }

  const queue = [...pending]
  const worker = async () => {
    for (let task = queue.shift(); task && !interrupted; task = queue.shift()) {
      const slot = pool ? await pool.acquire() : undefined
      if (interrupted) { if (slot) pool!.release(slot); break }
      let result: TaskResult | undefined
      if (pool && !slot) {
        result = { id: task.id, sessionId: null, reason: 'host-failed', text: '', usage: { inputTokens: 0, outputTokens: 0 }, wallMs: 0, host: null,
          error: { code: 'BATCH_NO_HOSTS', message: 'every host of the pool failed' } }
      } else {
        result = await runTask(task, slot)
        if (slot && pool && result?.reason !== 'host-failed') pool.release(slot)
      }
      if (!result) continue
      results.append(result)
      if (result.reason === 'completed') done++
      else {
        failed++
        err(`batch: task ${task.id} ${result.reason}${result.error ? `: ${result.error.code}: ${result.error.message}` : ''}`)
      }
      progress()
    }
  }
  try {
    await Promise.all(Array.from({ length: parallel }, worker))
  } finally {
    disposeSignal()
    results.close()
  }
  if (interrupted) {
    err(`batch: interrupted; ${done + failed} finished, the rest resume on the next run`)
    return interrupted
  }
  const allDone = done === pending.length && list.problems.length === 0
  err(`batch: ${allDone ? 'all' : `${done} of ${pending.length}`} task(s) completed; results in ${outFile}`)
  return allDone ? EXIT.completed : EXIT.failed
}
