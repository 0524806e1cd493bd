import { parseCommand, unknownReply, type CommandRegistry } from '@dsh/core'
import { DshError, type UserContent } from '@dsh/protocol'
import type { Conn } from '../connection.js'
import type { HostCore } from '../core.js'
import type { Hosted } from '../hosted.js'
import { createSession } from './sessions.js'
import type { In, Out } from './types.js'

export async function subscribe(h: HostCore, conn: Conn, p: In<'session/subscribe'>): Promise<Out<'session/subscribe'>> {
  const hosted = await h.hostedOf(p.sessionId)
  const lastSeq = hosted.session.durableCount - 1
  hosted.subscribe(conn, Math.min(p.afterSeq ?? lastSeq, lastSeq))
  return { lastSeq, status: hosted.status }
}

export async function unsubscribe(h: HostCore, conn: Conn, p: In<'session/unsubscribe'>): Promise<Out<'session/unsubscribe'>> {
  const hosted = h.hosted.get(p.sessionId)
  if (!hosted) await h.hostedOf(p.sessionId)
  hosted?.unsubscribe(conn)
  return {}
}

function content(prompt: In<'session/prompt'>['prompt']): UserContent[] {
  return typeof prompt === 'string' ? [{ type: 'text', text: prompt }] : prompt as UserContent[]
}

export async function prompt(h: HostCore, conn: Conn, p: In<'session/prompt'>): Promise<Out<'session/prompt'>> {
  const hosted = await h.owned(conn, p.sessionId)
  return hosted.prompt(content(p.prompt), p.mode ?? 'queue')
}

export async function cancel(h: HostCore, conn: Conn, p: In<'session/cancel'>): Promise<Out<'session/cancel'>> {
  const hosted = await h.owned(conn, p.sessionId)
  return { cancelled: hosted.cancel() }
}

export async function setModel(h: HostCore, conn: Conn, p: In<'session/set_model'>): Promise<Out<'session/set_model'>> {
  const hosted = await h.owned(conn, p.sessionId)
  // a model travels with its provider: without one, it is the current provider's
  const current = hosted.agent.modelConfig()
  const provider = p.provider ?? current.provider
  const info = h.ctx.llm.provider(provider)
  const model = p.model ?? (provider === current.provider ? current.model : info.defaultModel)
  hosted.agent.setModel({ provider, model, ...(p.reasoningEffort ? { reasoningEffort: p.reasoningEffort } : {}) })
  if (p.reasoningEffort === null) setEffortOption(hosted, undefined)
  return { config: h.config(hosted) }
}

/** Sets the agent's effort option and logs the resulting selection (`model/select`). */
function setEffortOption(hosted: Hosted, effort: In<'session/set_effort'>['reasoningEffort'] | undefined): void {
  const { agent } = hosted
  agent.options = { ...agent.options, reasoningEffort: effort ?? undefined }
  const config = agent.modelConfig()
  hosted.session.append('model/select', { provider: config.provider, model: config.model, ...(effort ? { reasoningEffort: effort } : {}) })
}

export async function setEffort(h: HostCore, conn: Conn, p: In<'session/set_effort'>): Promise<Out<'session/set_effort'>> {
  const hosted = await h.owned(conn, p.sessionId)
  setEffortOption(hosted, p.reasoningEffort)
  return { config: h.config(hosted) }
}

export async function setMode(h: HostCore, conn: Conn, p: In<'session/set_mode'>): Promise<Out<'session/set_mode'>> {
  const hosted = await h.owned(conn, p.sessionId)
  h.ctx.permission.checkWorkspace(p.permissionMode, hosted.session.cwd)
  h.ctx.permission.set(hosted.session, p.permissionMode)
  return { config: h.config(hosted) }
}

/** Before the first turn only (PRESET_LOCKED after): the preset's tool set and model defaults apply from now. */
export async function setPreset(h: HostCore, conn: Conn, p: In<'session/set_preset'>): Promise<Out<'session/set_preset'>> {
  const hosted = await h.owned(conn, p.sessionId)
  const presets = h.presets
  if (!presets) throw new DshError('PRESETS_UNAVAILABLE', 'agent presets need the @dsh/core/presets row')
  const preset = presets.set(hosted.session, p.agentPreset)
  const options = presets.agentOptions(preset)
  const filter = options.toolFilter
  const { agent } = hosted
  agent.options = {
    ...agent.options,
    toolFilter: filter ? (name: string) => hosted.ownTools.has(name) || filter(name) : undefined,
    ...(options.provider ? { provider: options.provider, model: options.model } : options.model ? { model: options.model } : {}),
    ...(options.reasoningEffort ? { reasoningEffort: options.reasoningEffort } : {}),
  }
  return { config: h.config(hosted) }
}

/**
 * Runs a slash command (no model request unless the command starts a turn, which is then
 * part of the session's activity). UNKNOWN_COMMAND lists the commands; a command that
 * fails is its error. `/clear` opens a new session in the same workspace, owned by the
 * caller, with the same permission preset.
 */
export async function command(h: HostCore, conn: Conn, p: In<'session/command'>): Promise<Out<'session/command'>> {
  const hosted = await h.owned(conn, p.sessionId)
  const commands = h.ctx.get('commands') as CommandRegistry | undefined
  const parsed = parseCommand(p.line)
  if (!parsed) throw new DshError('NOT_A_COMMAND', `not a slash command: ${JSON.stringify(p.line.slice(0, 40))}`, { hint: 'a command is /name followed by its arguments' })
  if (!commands) throw new DshError('COMMANDS_UNAVAILABLE', 'slash commands need the @dsh/core/commands row')
  if (!commands.get(parsed.name)) {
    throw new DshError('UNKNOWN_COMMAND', unknownReply(parsed.name, commands.list()))
  }
  let started: Promise<unknown> | undefined
  const result = await hosted.busy(async () => {
    const r = await commands.execute(hosted.session, hosted.agent, p.line, hosted.agent.signal ?? new AbortController().signal)
    if (r.turn) started = hosted.busy(() => r.turn!)
    return r
  })
  if (result.error) throw new DshError(result.error.code, result.error.message)
  let newSessionId: string | null = null
  if (result.newSession) {
    const fresh = await createSession(h, conn, { workspace: hosted.session.cwd, permissionMode: h.ctx.permission.current(hosted.session).id })
    newSessionId = fresh.session.id
  }
  void started
  return { name: result.name, reply: result.reply ?? null, startedTurn: !!result.turn, newSessionId }
}

export async function respond(h: HostCore, conn: Conn, p: In<'session/respond'>): Promise<Out<'session/respond'>> {
  const hosted = await h.hostedOf(p.sessionId)
  hosted.respond(conn, p.requestId, p.result)
  return {}
}
