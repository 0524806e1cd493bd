import { statSync } from 'node:fs'
import type { AgentOptions, Session } from '@dsh/core'
import { DshError, type SessionEvent } from '@dsh/protocol'
import { startingChoice } from '../defaults.js'
import type { Conn } from '../connection.js'
import type { HostCore } from '../core.js'
import type { Hosted } from '../hosted.js'
import { checkClientTools, clientTool, questionTool } from '../tools.js'
import type { In, Out } from './types.js'

/** An absolute, existing directory, or WORKSPACE_INVALID naming the field. */
export function directory(path: string, field: string): string {
  let isDir = false
  try {
    isDir = statSync(path).isDirectory()
  } catch {
    // reported below
  }
  if (!isDir) {
    throw new DshError('WORKSPACE_INVALID', `${field} ${JSON.stringify(path.slice(0, 200))} is not an existing directory`, {
      data: { issues: [{ path: `params.${field}`, message: 'not an existing directory' }] },
    })
  }
  return path
}

/**
 * The model, permission preset and agent preset of a new session, checked before anything
 * exists: an explicit param, else the agent preset, else settings.yaml (a model only
 * travels with its provider); the provider must be known and have a key; the preset must
 * accept the workspace (UNSAFE_WORKSPACE).
 */
function newSessionDefaults(h: HostCore, p: In<'session/create'>, workspace: string) {
  const { ctx } = h
  const settings = ctx.settings.get()
  const permissionMode = p.permissionMode ?? settings.permissionMode ?? ctx.permission.defaultId
  try {
    ctx.permission.preset(permissionMode)
  } catch (error) {
    if (p.permissionMode) throw error
    throw new DshError('INVALID_SETTING', `settings.yaml: permissionMode "${permissionMode}" is not a permission preset`, { cause: error, hint: 'fix permissionMode in settings.yaml (read-only, workspace-write, danger-full-access)' })
  }
  ctx.permission.checkWorkspace(permissionMode, workspace)
  const presets = h.presets
  if (p.agentPreset && !presets) throw new DshError('PRESETS_UNAVAILABLE', 'agentPreset needs the agent presets row (@dsh/core/presets)')
  const preset = presets ? presets.get(p.agentPreset ?? presets.defaultId) : undefined
  const presetOptions: AgentOptions = preset && presets ? presets.agentOptions(preset) : {}
  const choice = startingChoice(ctx, { provider: p.provider, model: p.model, reasoningEffort: p.reasoningEffort }, presetOptions)
  // fail before anything exists when the provider has no key
  ctx.llm.resolve(choice.provider)
  return { permissionMode, preset, presetFilter: presetOptions.toolFilter, agent: { ...choice, maxTokens: p.maxTokens } }
}

/** What the host uses of `ctx.worlds` (@dsh/world-ssh, an optional row): remote execution worlds. */
interface WorldsSeam {
  spec(flags: { url?: string | undefined; identity?: string | undefined; knownHosts?: string | undefined }, settings: unknown, cwd: string): object | undefined
  workspace(spec: object): string
  enter(session: Session, spec: object | undefined): Promise<unknown>
}

const worldsOf = (h: HostCore) => h.ctx.get('worlds') as WorldsSeam | undefined
const noWorlds = () => new DshError('WORLD_UNSUPPORTED', 'remote worlds need the worlds row (@dsh/world-ssh/world)')
/** A session whose log selected a remote world: its workspace is not on this machine. */
const isRemote = (events: readonly SessionEvent[]) => events.some((e) => e.type === 'world/select')

/** Registers the per-session tools: `question` when the owner answers questions, and the client's own. */
function sessionTools(h: HostCore, hosted: Hosted, conn: Conn, specs: In<'session/create'>['tools'], schemas: ReturnType<typeof checkClientTools>): void {
  const register = (tool: Parameters<HostCore['ctx']['tools']['register']>[0], bypassPreset: boolean) => {
    hosted.disposers.push(h.ctx.tools.register(tool, { sessionId: hosted.id }))
    if (bypassPreset) hosted.ownTools.add(tool.name)
  }
  // `question` is the harness's own tool: an agent preset's tool set decides over it like any built-in;
  // a client-defined tool is the client's explicit choice and passes the preset's filter
  if (conn.capabilities.questions) register(questionTool(hosted), false)
  ;(specs ?? []).forEach((spec, i) => register(clientTool(hosted, spec, schemas[i]!), true))
}

async function mountMcp(h: HostCore, hosted: Hosted, servers: In<'session/create'>['mcpServers']): Promise<void> {
  const entries = Object.entries(servers ?? {})
  if (!entries.length) return
  const mcp = h.ctx.get('mcp') as { mount(name: string, spec: unknown, o: { sessionId: string }): Promise<unknown>; unmount(name: string, o: { sessionId: string }): Promise<void> } | undefined
  if (!mcp) throw new DshError('MCP_UNAVAILABLE', 'mcpServers needs the MCP client row (@dsh/mcp/client)')
  for (const [name] of entries) hosted.disposers.push(() => mcp.unmount(name, { sessionId: hosted.id }).catch(() => undefined))
  await Promise.all(entries.map(([name, spec]) => mcp.mount(name, spec, { sessionId: hosted.id })))
}

export async function createSession(h: HostCore, conn: Conn, p: In<'session/create'>): Promise<Out<'session/create'>> {
  const { ctx } = h
  // a world (the param, else settings.yaml's `world`) puts the workspace on the remote side
  const worlds = worldsOf(h)
  if (p.world && !worlds) throw noWorlds()
  const world = worlds?.spec({ url: p.world?.url, identity: p.world?.identity, knownHosts: p.world?.knownHosts }, ctx.settings.get(), p.workspace)
  const workspace = world ? worlds!.workspace(world) : directory(p.workspace, 'workspace')
  const roots = (p.roots ?? []).map((r, i) => directory(r, `roots.${i}`))
  if (p.tools?.length && !conn.capabilities.tools) {
    throw new DshError('CAPABILITY_MISSING', `client "${conn.client.name}" did not declare capabilities.tools, so it cannot define tools`)
  }
  if (p.mcpServers && Object.keys(p.mcpServers).length && !ctx.get('mcp')) throw new DshError('MCP_UNAVAILABLE', 'mcpServers needs the MCP client row (@dsh/mcp/client)')
  const schemas = checkClientTools(p.tools ?? [], (name) => !!ctx.tools.get(name))
  const d = newSessionDefaults(h, p, workspace)
  const session = await ctx.sessions.create({ cwd: workspace })
  let hosted: Hosted | undefined
  try {
    ctx.permission.set(session, d.permissionMode)
    if (roots.length) session.append('workspace/roots', { roots })
    if (d.preset) h.presets?.set(session, d.preset.id)
    if (p.title) session.append('session/title', { title: p.title, source: 'user' }, { ignorable: true })
    if (world) await worlds!.enter(session, world)
    hosted = h.adopt(conn, session, { agent: d.agent, presetFilter: d.presetFilter }, -1)
    sessionTools(h, hosted, conn, p.tools, schemas)
    await mountMcp(h, hosted, p.mcpServers)
    await session.flush()
  } catch (error) {
    if (hosted) await h.release(hosted)
    else await session.close()
    throw error
  }
  return { session: h.detail(await h.stillConnected(conn, hosted)) }
}

/**
 * Opens (lock, load, repair) a stored session for `conn`. Refused when another client owns
 * it here, or when its workspace is gone. What opening appended (repairs, notices) is
 * replayed to the caller after the reply; a repair of a crash adds a notice saying so.
 */
export async function openSession(h: HostCore, conn: Conn, p: In<'session/open'>): Promise<Out<'session/open'>> {
  const busy = (by: Conn | undefined) => new DshError('SESSION_BUSY', `session ${p.sessionId} is open on this host by "${by?.client.name ?? 'another client'}"`)
  const inFlight = h.opening.get(p.sessionId)
  if (inFlight) {
    if (inFlight.conn !== conn) throw busy(inFlight.conn)
    await inFlight.done.catch(() => undefined)
  }
  const existing = h.hosted.get(p.sessionId)
  if (existing) {
    if (existing.owner !== conn) throw busy(existing.owner)
    return { session: h.detail(existing) }
  }
  const done = openStored(h, conn, p)
  h.opening.set(p.sessionId, { conn, done })
  try {
    return await done
  } finally {
    if (h.opening.get(p.sessionId)?.done === done) h.opening.delete(p.sessionId)
  }
}

async function openStored(h: HostCore, conn: Conn, p: In<'session/open'>): Promise<Out<'session/open'>> {
  const { ctx } = h
  const appended: SessionEvent[] = []
  const stop = ctx.on('session/event', (s: Session, event: SessionEvent) => { if (s.id === p.sessionId) appended.push(event) })
  let session: Session
  try {
    session = await ctx.sessions.open(p.sessionId)
  } finally {
    stop()
  }
  return { session: h.detail(await h.stillConnected(conn, await hostStored(h, conn, session, appended, p.maxTokens))) }
}

/** Takes an opened (or forked) stored session onto the host: workspace check, repair note, agent from the log. */
async function hostStored(h: HostCore, conn: Conn, session: Session, appended: readonly SessionEvent[], maxTokens?: number): Promise<Hosted> {
  const { ctx } = h
  let hosted: Hosted | undefined
  try {
    const remote = isRemote(session.events)
    if (remote) {
      const worlds = worldsOf(h)
      if (!worlds) throw noWorlds()
      await worlds.enter(session, undefined)
    } else if (!isDirectory(session.cwd)) {
      throw new DshError('WORKSPACE_GONE', `the workspace of session ${session.id}, ${session.cwd}, no longer exists`, {
        hint: 'restore the directory, or fork the session into another workspace (session/fork {workspace})',
      })
    }
    const repaired = appended.filter((e) => e.type !== 'notice')
    if (repaired.length) {
      session.append('notice', { level: 'info', message: `closed what a crash left open: ${describeRepair(repaired)}`, source: 'host' })
    }
    if (!session.last('permission/preset')) ctx.permission.set(session, ctx.permission.current(session).id)
    const presets = h.presets
    const presetFilter = presets ? presets.agentOptions(presets.current(session)).toolFilter : undefined
    const afterSeq = appended.length ? appended[0]!.seq - 1 : session.events.length - 1
    hosted = h.adopt(conn, session, { agent: { maxTokens }, presetFilter }, afterSeq)
    sessionTools(h, hosted, conn, [], [])
    await session.flush()
    return hosted
  } catch (error) {
    if (hosted) await h.release(hosted)
    else await session.close()
    throw error
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

function describeRepair(events: readonly SessionEvent[]): string {
  const results = events.filter((e) => e.type === 'tool/result').length
  const turns = events.filter((e) => e.type === 'turn/end').length
  const parts = [results ? `${results} tool call${results > 1 ? 's' : ''} given an error result` : '', turns ? 'the turn marked interrupted' : '']
  return parts.filter(Boolean).join(', ') || `${events.length} event${events.length > 1 ? 's' : ''} appended`
}

/**
 * Where a fork point lands: `atMessageId` (an assistant message) or `atSeq`, rounded to the
 * end of the step it falls in. FORK_POINT_NOT_FOUND when it is not in the log.
 */
export function forkCut(events: readonly SessionEvent[], at: { atSeq?: number | undefined; atMessageId?: string | undefined }): number {
  let seq: number
  if (at.atMessageId !== undefined) {
    const found = events.find((e) => e.type === 'assistant/message' && (e.data as { id?: string }).id === at.atMessageId)
    if (!found) throw new DshError('FORK_POINT_NOT_FOUND', `no assistant message ${JSON.stringify(at.atMessageId.slice(0, 80))} in the log`)
    seq = found.seq
  } else if (at.atSeq !== undefined) {
    if (at.atSeq >= events.length) throw new DshError('FORK_POINT_NOT_FOUND', `seq ${at.atSeq} is not in the log (last seq ${events.length - 1})`)
    seq = at.atSeq
  } else {
    return events.length - 1
  }
  let open = false
  for (let i = 0; i <= seq; i++) {
    if (events[i]!.type === 'step/start') open = true
    else if (events[i]!.type === 'step/end') open = false
  }
  if (!open) return seq
  for (let i = seq + 1; i < events.length; i++) if (events[i]!.type === 'step/end') return i
  return events.length - 1
}

export async function forkSession(h: HostCore, conn: Conn, p: In<'session/fork'>): Promise<Out<'session/fork'>> {
  const { ctx } = h
  if (p.atSeq !== undefined && p.atMessageId !== undefined) throw new DshError('INVALID_PARAMS', 'give atSeq or atMessageId, not both')
  const live = h.hosted.get(p.sessionId)
  const source = live ? { header: live.session.header, events: live.durableEvents() } : await ctx.sessions.read(p.sessionId)
  const cut = forkCut(source.events, p)
  const cwd = p.workspace ? directory(p.workspace, 'workspace') : source.header.cwd
  if (!isRemote(source.events) && !isDirectory(cwd)) throw new DshError('WORKSPACE_GONE', `the workspace ${cwd} of session ${p.sessionId} no longer exists`, { hint: 'fork into another workspace (workspace param)' })
  const session = await ctx.sessions.fork(p.sessionId, { uptoSeq: cut, cwd })
  const hosted = await h.stillConnected(conn, await hostStored(h, conn, session, [], undefined))
  return { session: h.detail(hosted) }
}

export async function closeSession(h: HostCore, conn: Conn, p: In<'session/close'>): Promise<Out<'session/close'>> {
  await h.release(await h.owned(conn, p.sessionId))
  return {}
}
