import type { Context } from '@deepseek-ai/cordis'
import { DshError, formatError, type Json, type SessionEvent } from '@dsh/protocol'
import { presentCall } from '@dsh/core'
import type { Session } from '@dsh/core'
import { HEADLESS_USAGE, parseHeadlessArgs, type HeadlessArgs } from './args.js'
import { eventLine, progressLine } from './progress.js'

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

const EXIT = { completed: 0, failed: 1, usage: 2, interrupted: 130 } as const

/**
 * The headless surface: one turn over a new or resumed session in the current
 * directory. stderr: `session: <id>` first, then one line per tool call; stdout: the final
 * answer, or with --json every session event as NDJSON. Exit 0 only when the turn completed.
 */
export async function runHeadless(ctx: Context): Promise<number> {
  const { launcher } = ctx
  const err = (line: string) => launcher.stderr.write(line + '\n')
  let args: HeadlessArgs
  try {
    args = parseHeadlessArgs(launcher.argv)
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

  let session: Session
  try {
    const settings = ctx.settings.get()
    const provider = args.provider ?? settings.provider
    // Fail before any request (and before creating a session) when the key is missing.
    ctx.llm.resolve(ctx.llm.defaults({ provider }).provider)
    session = args.resume ? await ctx.sessions.open(args.resume) : await ctx.sessions.create({ cwd: launcher.cwd })
    const mode = args.permissionMode ?? (args.resume ? undefined : settings.permissionMode)
    if (mode) ctx.permission.set(session, mode)
    else if (!session.last('permission/preset')) ctx.permission.set(session, ctx.permission.current(session).id)
  } catch (error) {
    err(formatError(error))
    return EXIT.failed
  }
  err(`session: ${session.id}`)

  const settings = ctx.settings.get()
  const agent = ctx.agents.create(session, {
    provider: args.provider ?? (args.resume ? undefined : settings.provider),
    model: args.model ?? (args.resume ? undefined : settings.model),
    maxTokens: args.maxTokens,
    reasoningEffort: args.reasoningEffort ?? settings.reasoningEffort,
  })
  const disposeListener = ctx.on('session/event', (s: Session, event: SessionEvent) => {
    if (s !== session) return
    if (args.json) launcher.stdout.write(eventLine(event))
    else if (event.type === 'tool/call') {
      const data = event.data as { name: string; args: Json }
      err(progressLine(data.name, presentCall(ctx.tools.get(data.name), data.name, data.args)))
    } else if (event.type === 'llm/retry') {
      const data = event.data as { attempt: number; code: string; delayMs: number }
      err(`… ${data.code}: retrying in ${data.delayMs} ms (attempt ${data.attempt + 1})`)
    }
  })
  let interrupted = false
  const disposeSignal = ctx.on('launcher/signal', () => {
    interrupted = true
    agent.cancel()
    return true
  })
  try {
    const outcome = await agent.followup(task)
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
