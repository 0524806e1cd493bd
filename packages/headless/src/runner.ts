import type { Context } from '@deepseek-ai/cordis'
import { DshError, formatError, REASONING_EFFORTS, type Json, type ReasoningEffort, type SessionEvent } from '@dsh/protocol'
import { parseCommand, presentCall, startingModel } from '@dsh/core'
import type { AgentOptions, CommandRegistry, PresetService, Session, TurnOutcome } from '@dsh/core'
import { HEADLESS_USAGE, parseHeadlessArgs, type HeadlessArgs } from './args.js'
import { eventLine, progressLine } from './progress.js'

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** settings.yaml's effort, when it names a known one (settings are validated loosely). */
function effortOf(value: string | undefined): ReasoningEffort | undefined {
  return value && (REASONING_EFFORTS as readonly string[]).includes(value) ? value as ReasoningEffort : undefined
}

/** What this surface uses of `ctx.worlds` (@dsh/world-ssh), an optional row. */
interface WorldsSeam {
  spec(flags: { url?: string | undefined; identity?: string | undefined; knownHosts?: string | undefined }, settings: unknown, cwd: string): object | undefined
  workspace(spec: object): string
  enter(session: Session, spec: object | undefined): Promise<unknown>
}

const EXIT = { completed: 0, failed: 1, usage: 2, interrupted: 130 } as const

/**
 * The headless surface: one turn over a new or resumed session in the current
 * directory. stderr: `session: <id>` first, then one line per tool call; stdout: the final
 * answer, or with --json every session event as NDJSON. Exit 0 only when the turn completed.
 * A task that parses as `/name args` runs that slash command (`ctx.commands`, when
 * mounted): its reply goes to stdout (stderr and exit 2 for an unknown command, exit 1
 * when it failed); a turn it started is awaited like a prompt's.
 * The session's agent preset (`ctx.presets`, when mounted; `--agent` chooses it) supplies
 * tool set and model defaults; --provider/--model/--reasoning-effort go on top.
 */
export async function runHeadless(ctx: Context): Promise<number> {
  const { launcher } = ctx
  const err = (line: string) => launcher.stderr.write(line + '\n')
  let args: HeadlessArgs
  try {
    args = parseHeadlessArgs(launcher.argv, launcher.env)
  } catch (error) {
    err(formatError(error))
    return EXIT.usage
  }
  if (args.help) {
    launcher.stdout.write(HEADLESS_USAGE + '\n')
    return EXIT.completed
  }
  let task = args.task
  if (args.fromStdin) task = (await readStdin()).trim()
  if (!task?.trim()) {
    err(formatError(new DshError('USAGE', 'no task given', { hint: 'dsh --profile headless "TASK"  (or "-" to read it from stdin)' })))
    return EXIT.usage
  }

  // optional neighbours, not injected: slash commands and agent presets (rows that may
  // still be starting when this surface does: wait for the whole tree before going without)
  if (!ctx.get('commands') || !ctx.get('presets')) await launcher.ready
  const commands = ctx.get('commands') as CommandRegistry | undefined
  const presets = ctx.get('presets') as PresetService | undefined
  const command = parseCommand(task)
  if (command && !commands) {
    err(formatError(new DshError('USAGE', `"/${command.name}" is a slash command, but no command registry is mounted`, { hint: 'mount the @dsh/core/commands row' })))
    return EXIT.usage
  }

  // Listening starts before the session is opened: what opening appends (repairs of a
  // crash, migration notices, the permission preset) is reported too, after `session: <id>`.
  let session: Session | undefined
  const pending: [string, SessionEvent][] = []
  const report = (event: SessionEvent) => {
    if (args.json) return launcher.stdout.write(eventLine(event))
    const data = event.data as Record<string, Json>
    if (event.type === 'tool/call') {
      const name = data.name as string
      err(progressLine(name, presentCall(ctx.tools.get(name, session?.id), name, data.args ?? null)))
    } else if (event.type === 'llm/retry') {
      err(`… ${data.code as string}: retrying in ${data.delayMs as number} ms (attempt ${(data.attempt as number) + 1})`)
    } else if (event.type === 'notice') {
      err(`${data.level === 'error' ? 'error' : 'note'}: ${data.message as string}`)
    }
  }
  const disposeListener = ctx.on('session/event', (s: Session, event: SessionEvent) => {
    if (session) {
      if (s === session) report(event)
    } else {
      pending.push([s.id, event])
    }
  })
  try {
    const settings = ctx.settings.get()
    const provider = args.provider ?? settings.provider
    // Fail before any request (and before creating a session) when the key is missing;
    // a slash command may need no model at all (a turn it starts fails on its own).
    if (!command) ctx.llm.resolve(ctx.llm.defaults({ provider }).provider)
    if (args.agent && !presets) throw new DshError('USAGE', '--agent needs the agent presets row (@dsh/core/presets)')
    // an execution world (--world, or settings.yaml `world` for a new session; a resumed
    // session's logged one): an optional row, waited for only when a world may be involved
    const mayNeedWorld = !!args.world || !!args.resume || (settings as { world?: unknown }).world !== undefined
    if (mayNeedWorld && !ctx.get('worlds')) await launcher.ready
    const worlds = ctx.get('worlds') as WorldsSeam | undefined
    const world = worlds?.spec({ url: args.world, identity: args.identity, knownHosts: args.knownHosts }, args.resume ? undefined : settings, launcher.cwd)
    if (args.world && !worlds) throw new DshError('USAGE', '--world needs the worlds row (@dsh/world-ssh/world)')
    session = args.resume ? await ctx.sessions.open(args.resume) : await ctx.sessions.create({ cwd: world ? worlds!.workspace(world) : launcher.cwd })
    await worlds?.enter(session, world)
    if (!worlds && session.last('world/select')) {
      throw new DshError('WORLD_UNAVAILABLE', 'this session runs in a remote world, but the worlds row (@dsh/world-ssh/world) is not mounted', { hint: 'add the row, or resume it with a profile that has it' })
    }
    const mode = args.permissionMode ?? (args.resume ? undefined : settings.permissionMode)
    if (mode) ctx.permission.set(session, mode)
    else if (!session.last('permission/preset')) ctx.permission.set(session, ctx.permission.current(session).id)
    if (args.agent) presets?.set(session, args.agent)
    // an unsafe workspace (e.g. "/" under workspace-write) fails here, before any request
    ctx.permission.policy(session)
  } catch (error) {
    disposeListener()
    if (session) await session.close()
    err(formatError(error))
    return EXIT.failed
  }
  err(`session: ${session.id}`)
  for (const [id, event] of pending.splice(0)) if (id === session.id) report(event)

  const settings = ctx.settings.get()
  // a resumed session keeps its logged model choice; the preset's tool set always applies
  const fresh = !args.resume
  const preset: AgentOptions = presets ? presets.agentOptions(presets.current(session)) : {}
  const flags = { provider: args.provider, model: args.model, reasoningEffort: args.reasoningEffort }
  const choice = fresh
    ? startingModel(flags, preset, { provider: settings.provider, model: settings.model, reasoningEffort: effortOf(settings.reasoningEffort) })
    : flags
  // `create` drops undefined options, so the agents row's defaults stay
  const agent = ctx.agents.create(session, { toolFilter: preset.toolFilter, ...choice, maxTokens: args.maxTokens })
  let interrupted = false
  const stop = new AbortController()
  const disposeSignal = ctx.on('launcher/signal', () => {
    interrupted = true
    stop.abort()
    agent.cancel()
    return true
  })
  try {
    let outcome: TurnOutcome
    if (command && commands) {
      const result = await commands.execute(session, agent, task, stop.signal)
      if (!result.known || result.error) {
        err(result.reply ?? `the command /${result.name} failed`)
        return result.known ? EXIT.failed : EXIT.usage
      }
      if (result.reply && !args.json) launcher.stdout.write(result.reply.endsWith('\n') ? result.reply : result.reply + '\n')
      if (result.newSession) {
        // `/clear`: a fresh session in the same workspace; its id is what to --resume next
        const fresh = await ctx.sessions.create({ cwd: session.cwd })
        ctx.permission.set(fresh, ctx.permission.current(session).id)
        err(`new session: ${fresh.id}`)
        await fresh.close()
      }
      if (!result.turn) return EXIT.completed
      outcome = await result.turn
    } else {
      outcome = await agent.followup(task)
    }
    if (outcome.reason === 'completed') {
      if (!args.json) launcher.stdout.write(outcome.text.endsWith('\n') ? outcome.text : outcome.text + '\n')
      return EXIT.completed
    }
    if (outcome.reason === 'aborted') {
      err('ABORTED: the turn was cancelled')
      return interrupted ? EXIT.interrupted : EXIT.failed
    }
    const error = outcome.error ?? { code: outcome.reason.toUpperCase().replace('-', '_'), message: `the turn ended: ${outcome.reason}` }
    err(`${error.code}: ${error.message}`)
    return EXIT.failed
  } finally {
    disposeListener()
    disposeSignal()
    ctx.agents.remove(session.id)
    await session.close()
  }
}
