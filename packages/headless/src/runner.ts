import type { Context } from '@deepseek-ai/cordis'
import { DshError, failpoint, formatError, isDshError, signalExitCode, textOf, type AssistantBlock, type CallCard, type ErrorInfo, type Json, type SessionEvent, type TurnEndReason } from '@dsh/protocol'
import { parseCommand, unknownReply, type CommandRegistry } from '@dsh/core'
import type { HostClient, HostConnection } from '@dsh/host'
import { HEADLESS_USAGE, parseHeadlessArgs, type HeadlessArgs } from './args.js'
import { eventLine, progressLine, terminalSafe } from './progress.js'

/** The largest task `-` reads from stdin (what `dsh web` takes in one request body). */
export const MAX_STDIN_TASK = 16 * 1024 * 1024

/**
 * The task on stdin; past MAX_STDIN_TASK bytes the rest is drained unread (memory stays
 * bounded, the writer gets no EPIPE) and the task is PROMPT_TOO_LARGE.
 */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length
    if (size <= MAX_STDIN_TASK) chunks.push(chunk as Buffer)
    else chunks.length = 0
  }
  if (size > MAX_STDIN_TASK) {
    throw new DshError('PROMPT_TOO_LARGE', `the task on stdin is ${size} bytes; at most ${MAX_STDIN_TASK} (16 MiB) are read`, {
      hint: 'put the material in a file in the workspace and ask dsh to read it',
    })
  }
  return Buffer.concat(chunks).toString('utf8')
}

const EXIT = { completed: 0, failed: 1, usage: 2 } as const

/** A value the user passed as a flag that the host refused (an unknown --provider or --agent): a usage error, exit 2. */
function flagRefused(error: unknown, args: HeadlessArgs): boolean {
  return (isDshError(error, 'UNKNOWN_PROVIDER') && args.provider !== undefined) || (isDshError(error, 'UNKNOWN_AGENT_PRESET') && args.agent !== undefined)
}

interface TurnEnd { reason: TurnEndReason; error?: ErrorInfo; text: string }

/**
 * What headless prints, fed only by `session/event` notifications (durable events, in
 * seq order): with --json every event as NDJSON on stdout, else progress lines on stderr.
 * It also follows turns: the end of the turn that took a prompt (or the next turn, after a
 * command that started one) with the text of that turn's last assistant message.
 */
class Printer {
  private current: { number: number; text: string } | undefined
  private readonly promptTurn = new Map<string, number>()
  private readonly ends = new Map<number, TurnEnd>()
  private readonly waiters: { turn(): number | undefined; resolve(end: TurnEnd): void }[] = []
  /** The first turn that starts after `nextTurn()` was called. */
  private next: { armed: boolean; turn?: number } = { armed: false }
  private failure: TurnEnd | undefined

  constructor(private readonly args: HeadlessArgs, private readonly out: (s: string) => void, private readonly err: (s: string) => void) {}

  event(event: SessionEvent, view: unknown): void {
    this.follow(event)
    if (this.args.json) return this.out(eventLine(event))
    const data = event.data as Record<string, Json>
    if (event.type === 'tool/call') {
      const name = data.name as string
      const card = (view as { card?: CallCard } | null)?.card
      this.err(progressLine(name, card ?? { card: 'generic', title: name, kind: 'other' }))
    } else if (event.type === 'llm/retry') {
      this.err(`… ${data.code as string}: retrying in ${data.delayMs as number} ms (attempt ${(data.attempt as number) + 1})`)
    } else if (event.type === 'notice') {
      this.err(`${data.level === 'error' ? 'error' : 'note'}: ${terminalSafe(data.message as string)}`)
    }
  }

  /** Arms `nextTurnEnd`: the first turn that starts from now on. */
  armNextTurn(): void {
    this.next = { armed: true }
  }

  /** The end of the turn armed by `armNextTurn`. */
  nextTurnEnd(): Promise<TurnEnd> {
    return this.wait(() => this.next.turn)
  }

  /** The end of the turn that took `promptId`. */
  promptEnd(promptId: string): Promise<TurnEnd> {
    return this.wait(() => this.promptTurn.get(promptId))
  }

  /** The session can no longer record anything: every wait ends with `error`. */
  failed(error: ErrorInfo): void {
    this.failure = { reason: 'error', error, text: '' }
    for (const waiter of this.waiters.splice(0)) waiter.resolve(this.failure)
  }

  private wait(turn: () => number | undefined): Promise<TurnEnd> {
    return new Promise((resolve) => {
      if (this.failure) return resolve(this.failure)
      this.waiters.push({ turn, resolve })
      this.settle()
    })
  }

  private follow(event: SessionEvent): void {
    const data = event.data as Record<string, unknown>
    if (event.type === 'turn/start') {
      const number = data.turn as number
      this.current = { number, text: '' }
      for (const id of (data.prompts as string[] | undefined) ?? []) this.promptTurn.set(id, number)
      if (this.next.armed && this.next.turn === undefined) this.next.turn = number
    } else if (event.type === 'assistant/message' && this.current) {
      this.current.text = textOf(data.content as AssistantBlock[])
    } else if (event.type === 'turn/end') {
      const number = data.turn as number
      const text = this.current?.number === number ? this.current.text : ''
      this.ends.set(number, { reason: data.reason as TurnEndReason, ...(data.error ? { error: data.error as ErrorInfo } : {}), text })
      this.settle()
    }
  }

  private settle(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i]!
      const turn = waiter.turn()
      const end = turn === undefined ? undefined : this.ends.get(turn)
      if (!end) continue
      this.waiters.splice(i, 1)
      waiter.resolve(end)
    }
  }
}

/** The headless client: answers nothing (approvals are denied with the reason, no question tool, no client tools). */
function client(printer: Printer, onEvent: (sessionId: string, print: () => void) => void): HostClient {
  return {
    name: 'headless',
    capabilities: { approvals: false, questions: false, tools: false },
    notify(method, params) {
      if (method === 'session/status') {
        // the session's log failed: its turn's end can never be shown, so stop waiting for it
        const p = params as { sessionId: string; error?: ErrorInfo }
        if (p.error) onEvent(p.sessionId, () => printer.failed(p.error!))
        return
      }
      if (method !== 'session/event') return
      const p = params as { sessionId: string; event: SessionEvent; view: unknown }
      onEvent(p.sessionId, () => printer.event(p.event, p.view))
    },
    request: () => Promise.reject(new DshError('NOT_SUPPORTED', 'headless answers no requests')),
  }
}

/**
 * The headless surface, a thin adapter over `ctx.host`: one turn over a new or resumed
 * session in the current directory. stderr: `session: <id>` first, then one line per tool
 * call; stdout: the final answer (also the partial one of a turn cut at the token limit),
 * or with --json every durable session event as NDJSON. Exit 0 only when the turn
 * completed. A task that parses as `/name args` runs that slash command: its reply goes to
 * stdout; an unknown command is `UNKNOWN_COMMAND: …` with exit 2 and creates no session;
 * a failed one exits 1; a turn it started is awaited like a prompt's.
 */
export async function runHeadless(ctx: Context): Promise<number> {
  const { launcher } = ctx
  const err = (line: string) => launcher.stderr.write(line + '\n')
  // A terminal gets the answer with its control characters shown, not obeyed; a pipe gets it as is.
  const tty = (launcher.stdout as { isTTY?: boolean }).isTTY === true
  // A reader that went away (`| head`, a dead `| jq`) cancels the turn like Ctrl-C; nothing more is written.
  let stdoutClosed = false
  let onStdoutClosed = () => {}
  const stdoutError = (error: NodeJS.ErrnoException) => {
    if (stdoutClosed) return
    stdoutClosed = true
    if (error.code !== 'EPIPE') err(formatError(error))
    onStdoutClosed()
  }
  // stays attached: an EPIPE of the last write may arrive after this function returned
  launcher.stdout.on('error', stdoutError)
  const write = (text: string, done?: () => void) => {
    if (!stdoutClosed) launcher.stdout.write(text, done)
  }
  const out = (text: string) => {
    const shown = tty ? terminalSafe(text) : text
    write(shown.endsWith('\n') ? shown : shown + '\n')
  }
  let args: HeadlessArgs
  try {
    args = parseHeadlessArgs(launcher.argv, launcher.env)
  } catch (error) {
    err(formatError(error))
    return EXIT.usage
  }
  if (args.help) {
    write(HEADLESS_USAGE + '\n')
    return EXIT.completed
  }
  let task = args.task
  if (args.fromStdin) {
    try {
      task = (await readStdin()).trim()
    } catch (error) {
      err(formatError(error))
      return EXIT.usage
    }
  }
  if (!task?.trim()) {
    err(formatError(new DshError('USAGE', 'no task given', { hint: 'dsh --profile headless "TASK"  (or "-" to read it from stdin)' })))
    return EXIT.usage
  }
  // optional rows (commands, presets) may still be starting when this surface does: wait for the whole tree before going without
  if (!ctx.get('commands') || !ctx.get('presets')) await launcher.ready
  // the worlds row (optional) too, when a world may be involved: --world, a resumed session's
  // logged world, or settings.yaml's `world`; without it the host refuses rather than run locally
  if ((args.world || args.resume || (ctx.get('settings') as { get(): { world?: unknown } } | undefined)?.get().world !== undefined) && !ctx.get('worlds')) await launcher.ready
  const command = parseCommand(task)
  if (command) {
    const commands = ctx.get('commands') as CommandRegistry | undefined
    if (!commands) {
      err(formatError(new DshError('USAGE', `"/${command.name}" is a slash command, but no command registry is mounted`, { hint: 'mount the @dsh/core/commands row' })))
      return EXIT.usage
    }
    if (!commands.get(command.name)) {
      err(formatError(new DshError('UNKNOWN_COMMAND', unknownReply(command.name, commands.list()))))
      return EXIT.usage
    }
  }

  // Events are printed only once `session: <id>` is out (what opening appended comes right after it).
  let sessionId: string | undefined
  const early: [string, () => void][] = []
  const printer = new Printer(args, (s) => write(s, () => failpoint('headless.event.shown')), err)
  const conn: HostConnection = ctx.host.connect(client(printer, (id, print) => {
    if (sessionId === undefined) early.push([id, print])
    else if (id === sessionId) print()
  }))
  /** The exit code of the signal that cancelled the turn (128 + its number). */
  let interrupted: number | undefined
  const disposeSignal = ctx.on('launcher/signal', (signal) => {
    interrupted = signalExitCode(signal)
    if (sessionId) void conn.call('session/cancel', { sessionId }).catch(() => undefined)
    return true
  })
  const cancelled = () => {
    if (sessionId) void conn.call('session/cancel', { sessionId }).catch(() => undefined)
  }
  onStdoutClosed = cancelled
  const closedReport = () => {
    err('STDOUT_CLOSED: stdout was closed before dsh finished writing; the turn was cancelled')
    // a terminal that closed sends SIGHUP as well: the signal's code
    return interrupted ?? EXIT.failed
  }
  try {
    try {
      sessionId = await openOrCreate(conn, args, launcher.cwd)
    } catch (error) {
      err(formatError(error))
      return flagRefused(error, args) ? EXIT.usage : EXIT.failed
    }
    if (stdoutClosed) return closedReport()
    err(`session: ${sessionId}`)
    for (const [id, print] of early.splice(0)) if (id === sessionId) print()

    let end: Promise<TurnEnd>
    if (command) {
      printer.armNextTurn()
      let result
      try {
        result = await conn.call('session/command', { sessionId, line: task })
      } catch (error) {
        err(isDshError(error) ? `${error.code}: ${error.message}` : formatError(error))
        return EXIT.failed
      }
      if (result.reply && !args.json) out(result.reply)
      if (result.newSessionId) {
        // `/clear`: the new session's id is what to --resume next
        err(`new session: ${result.newSessionId}`)
        await conn.call('session/close', { sessionId: result.newSessionId })
      }
      if (!result.startedTurn) return EXIT.completed
      end = printer.nextTurnEnd()
    } else {
      const receipt = await conn.call('session/prompt', { sessionId, prompt: task })
      end = printer.promptEnd(receipt.promptId)
    }
    const outcome = await end
    if (stdoutClosed) return closedReport()
    if (outcome.reason === 'completed') {
      if (!args.json) out(outcome.text)
      return EXIT.completed
    }
    if (outcome.reason === 'aborted') {
      err('ABORTED: the turn was cancelled')
      return interrupted ?? EXIT.failed
    }
    // a turn cut at the token limit still shows what it wrote
    if (outcome.reason === 'max-tokens' && outcome.text && !args.json) out(outcome.text)
    const error = outcome.error ?? { code: outcome.reason.toUpperCase().replace('-', '_'), message: `the turn ended: ${outcome.reason}` }
    err(`${error.code}: ${error.message}${'hint' in error && error.hint ? `\n  hint: ${error.hint}` : ''}`)
    return EXIT.failed
  } finally {
    disposeSignal()
    await conn.close()
  }
}

/** `--resume` opens (then applies the flags given as changes); otherwise a new session with the flags as explicit choices. */
async function openOrCreate(conn: HostConnection, args: HeadlessArgs, cwd: string): Promise<string> {
  const maxTokens = args.maxTokens !== undefined ? { maxTokens: args.maxTokens } : {}
  if (!args.resume) {
    // --world/--identity/--known-hosts: the host resolves the world (else settings.yaml's)
    const world = args.world ? { world: { url: args.world, ...(args.identity ? { identity: args.identity } : {}), ...(args.knownHosts ? { knownHosts: args.knownHosts } : {}) } } : {}
    const { session } = await conn.call('session/create', {
      workspace: cwd, ...maxTokens, ...world,
      ...(args.provider ? { provider: args.provider } : {}), ...(args.model ? { model: args.model } : {}),
      ...(args.reasoningEffort ? { reasoningEffort: args.reasoningEffort } : {}),
      ...(args.permissionMode ? { permissionMode: args.permissionMode } : {}), ...(args.agent ? { agentPreset: args.agent } : {}),
    })
    return session.id
  }
  const sessionId = args.resume
  await conn.call('session/open', { sessionId, ...maxTokens })
  if (args.permissionMode) await conn.call('session/set_mode', { sessionId, permissionMode: args.permissionMode })
  if (args.agent) await conn.call('session/set_preset', { sessionId, agentPreset: args.agent })
  if (args.provider || args.model) {
    await conn.call('session/set_model', {
      sessionId, ...(args.provider ? { provider: args.provider } : {}), ...(args.model ? { model: args.model } : {}),
      ...(args.reasoningEffort ? { reasoningEffort: args.reasoningEffort } : {}),
    })
  } else if (args.reasoningEffort) {
    await conn.call('session/set_effort', { sessionId, reasoningEffort: args.reasoningEffort })
  }
  return sessionId
}
