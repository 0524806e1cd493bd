import { Service, type Context } from '@deepseek-ai/cordis'
import { DshError, errorInfo, formatError, type ErrorInfo } from '@dsh/protocol'
import type { Agent } from '../agent/agent.js'
import type { TurnOutcome } from '../agent/types.js'
import type { Session } from '../session/session.js'

declare module '@dsh/protocol' {
  interface SessionEventMap {
    /**
     * A slash command ran (log-only: never model-visible). Logged when the command
     * returns, so a turn the command started may already have begun before it.
     */
    'command/run': { name: string; args: string; reply?: string; unknown?: true; error?: ErrorInfo }
  }
}
declare module '@deepseek-ai/cordis' {
  interface Context { commands: CommandRegistry }
  interface Events {
    /** A command was registered or unregistered (surfaces refresh their command lists). */
    'commands/changed'(): void
  }
}

/** What a command body gets. */
export interface CommandContext {
  /** The context of the plugin that registered the command (its injected services are usable). */
  ctx: Context
  session: Session
  agent: Agent
  /** Everything after the name, trimmed ('' when none). */
  args: string
  signal: AbortSignal
}

/**
 * What a command returns. Surfaces show `reply`; when `turn` is set the command sent
 * work to the agent and the surface awaits it like a prompt's turn; when `newSession`
 * is set the surface starts a new session in the same workspace and switches to it
 * (the current session stays on disk; headless only prints the reply).
 */
export type CommandResult = {
  reply?: string
  /** Set when the command sent work to the agent; the surface awaits it. */
  turn?: Promise<TurnOutcome>
  /** The surface must start a new session in the same workspace (`/clear`). */
  newSession?: true
}

export interface CommandSpec {
  /** Lower-case `[a-z0-9:_-]+`, without the slash. */
  name: string
  description: string
  /** Shown after the name in command lists, e.g. `[id | provider:id]`. */
  argumentHint?: string
  source: 'builtin' | 'skill' | 'plugin'
  /** Throw a DshError for bad input: `execute` turns it into a reply and reports it in `error`. */
  run(c: CommandContext): Promise<CommandResult>
}

/** What `execute` reports: the command's result plus which command it was. */
export type ExecutedCommand = CommandResult & {
  name: string
  /** false when no command of that name is registered (the reply says which exist). */
  known: boolean
  /** Set when the command threw; `reply` then holds the formatted error. */
  error?: ErrorInfo
}

const COMMAND_NAME = /^[a-z0-9:_-]+$/
const COMMAND_LINE = /^\s*\/([a-z0-9:_-]+)(?:\s+([\s\S]*))?$/

/**
 * Parses `/name args` (pure). Leading whitespace is allowed; the name is `[a-z0-9:_-]+`
 * and must be followed by whitespace or the end, so `/ foo`, `//x`, `/Foo` and paths
 * such as `/usr/bin/env` are not commands. `args` is the rest, trimmed.
 */
export function parseCommand(text: string): { name: string; args: string } | undefined {
  const match = COMMAND_LINE.exec(text)
  if (!match) return undefined
  return { name: match[1]!, args: (match[2] ?? '').trim() }
}

/**
 * `ctx.commands`: human slash commands. A command runs without a model turn unless its
 * body chooses to send work to the agent (and then returns the turn). Registrations
 * are effects of the registering plugin: its unload (or the returned disposer) removes them.
 */
export class CommandRegistry extends Service {
  private readonly specs = new Map<string, { spec: CommandSpec; ctx: Context }>()

  constructor(ctx: Context) {
    super(ctx, 'commands')
  }

  /** DUPLICATE_COMMAND when the name is taken, INVALID_COMMAND when it is malformed. */
  register(spec: CommandSpec): () => void {
    if (!COMMAND_NAME.test(spec.name)) {
      throw new DshError('INVALID_COMMAND', `command name "${spec.name}" must be lower-case letters, digits, ':', '_' or '-'`)
    }
    if (this.specs.has(spec.name)) {
      throw new DshError('DUPLICATE_COMMAND', `a command named /${spec.name} is already registered`)
    }
    const owner = this.ctx
    const entry = { spec, ctx: owner }
    const dispose = owner.effect(() => {
      this.specs.set(spec.name, entry)
      owner.emit('commands/changed')
      return () => {
        if (this.specs.get(spec.name) !== entry) return
        this.specs.delete(spec.name)
        owner.emit('commands/changed')
      }
    }, `commands.register(/${spec.name})`)
    return () => { void dispose() }
  }

  /** Sorted by name. */
  list(): CommandSpec[] {
    return [...this.specs.values()].map((e) => e.spec).sort((a, b) => a.name.localeCompare(b.name))
  }

  get(name: string): CommandSpec | undefined {
    return this.specs.get(name)?.spec
  }

  /**
   * Runs `/name args` on the session and logs `command/run {name, args, reply?}` when it
   * returns. An unknown name gets a reply listing the commands (also logged, `unknown:
   * true`); a thrown error becomes the reply (logged with `error`). Never prompts the
   * model by itself. NOT_A_COMMAND when `text` does not parse (check `parseCommand` first).
   */
  async execute(session: Session, agent: Agent, text: string, signal: AbortSignal = new AbortController().signal): Promise<ExecutedCommand> {
    const parsed = parseCommand(text)
    if (!parsed) throw new DshError('NOT_A_COMMAND', `not a slash command: ${JSON.stringify(text.slice(0, 40))}`)
    const { name, args } = parsed
    const entry = this.specs.get(name)
    if (!entry) {
      const reply = unknownReply(name, this.list())
      session.append('command/run', { name, args, reply, unknown: true }, { ignorable: true })
      return { name, known: false, reply }
    }
    let result: CommandResult
    try {
      result = await entry.spec.run({ ctx: entry.ctx, session, agent, args, signal })
    } catch (thrown) {
      const error = errorInfo(thrown)
      const reply = formatError(thrown)
      session.append('command/run', { name, args, reply, error }, { ignorable: true })
      return { name, known: true, reply, error }
    }
    session.append('command/run', { name, args, ...(result.reply !== undefined ? { reply: result.reply } : {}) }, { ignorable: true })
    return { ...result, name, known: true }
  }
}

/** `Unknown command /x. Available: /a, /b, …` (pure). */
export function unknownReply(name: string, specs: readonly CommandSpec[]): string {
  const names = specs.map((s) => `/${s.name}`)
  return `Unknown command /${name}. ${names.length ? `Available: ${names.join(', ')}` : 'No commands are available'}.`
}
