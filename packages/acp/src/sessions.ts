import { statSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import type * as acp from '@agentclientprotocol/sdk/unstable'
import type { Session } from '@dsh/core'
import { DshError, type ApprovalRequest, type ReasoningEffort } from '@dsh/protocol'
import { requireCredentials } from './auth.js'
import type { AcpConnection } from './connection.js'
import { agentOptions, defaultProvider, newSessionMode } from './defaults.js'
import {
  AGENT_CONFIG_ID, EFFORT_CONFIG_ID, EFFORT_VALUES, MODE_CONFIG_ID, MODEL_CONFIG_ID, configOptions, modeState, parseModelValue,
} from './config.js'
import { invalidParams, sessionNotFound } from './errors.js'
import { askPermission } from './permission.js'
import { forkCut, parseForkMeta } from './fork.js'
import { replayUpdates, titleOf } from './history.js'
import { TurnQueue } from './queue.js'
import type { SessionState } from './state.js'
import { SessionProjector } from './translate.js'
import { quote } from './quote.js'

/** An absolute, existing directory, or -32602 naming the field. */
function directory(path: string, field: string): string {
  if (!isAbsolute(path)) throw invalidParams(`${field} must be an absolute path, got ${quote(path)}`)
  let isDir = false
  try {
    isDir = statSync(path).isDirectory()
  } catch {
    // reported below
  }
  if (!isDir) throw invalidParams(`${field} ${quote(path)} is not an existing directory`)
  return path
}

/**
 * A subagent's question as its owner's client sees it: attached to the `task` call of the
 * subagent chain's topmost session below `ownerId` (the card the editor shows).
 */
function viaParentCall(b: AcpConnection, asking: Session, ownerId: string, request: ApprovalRequest & { id: string }): ApprovalRequest & { id: string } {
  let asked = request
  let target: Session | undefined = asking
  for (let depth = 0; target && target.id !== ownerId && depth < 32; depth++) {
    const parent = target.header.parent
    if (!parent || parent.fork) break
    if (parent.callId) asked = { ...asked, callId: parent.callId }
    target = b.ctx.sessions.get(parent.id)
  }
  return asked
}

/** Takes a session onto this connection: its agent, its live projection. Held back (`quiet`) until `release`. */
function adopt(b: AcpConnection, session: Session, fresh: boolean): SessionState {
  b.owners.claim(session.id, b)
  const agent = b.ctx.agents.create(session, agentOptions(b, session, fresh))
  const wire = { terminalOutput: b.terminalCards, cwd: session.cwd }
  const state: SessionState = {
    id: session.id, session, agent, wire, live: new SessionProjector(wire, b.presenter, 'live'),
    turn: undefined, queue: new TurnQueue(), quiet: true, lastOutcome: undefined, pendingOutput: new Map(), outputTimer: undefined,
    unanswer: () => undefined,
  }
  // this session's questions (and its subagents') come to this connection, never through a process-wide answerer
  state.unanswer = b.ctx.approval.setSessionAnswerer(session.id, (asking, request, signal) => askPermission(b, state, viaParentCall(b, asking, state.id, request), signal))
  b.sessions.set(state)
  return state
}

/** After the reply: the session's commands, its title and the notices logged while it was set up. */
function release(b: AcpConnection, state: SessionState, fromSeq: number): void {
  setImmediate(() => {
    if (b.sessions.get(state.id) !== state) return
    state.quiet = false
    b.sendCommands(state)
    const title = titleOf(state.session.events)
    if (title) b.send(state.id, { sessionUpdate: 'session_info_update', title })
    for (const event of state.session.events.slice(fromSeq)) {
      if (event.type === 'notice') {
        const { level, message } = event.data as { level: string; message: string }
        b.sendNotice(state, level, message)
      }
    }
  })
}

type McpSpec = { name: string; spec: Record<string, unknown> }

/** ACP MCP servers → harness specs (stdio and http); anything else is -32602 before anything runs. */
function mcpSpecs(servers: readonly acp.McpServer[] | undefined): McpSpec[] {
  return (servers ?? []).map((server, i) => {
    const pairs = (list: readonly { name: string; value: string }[]) => Object.fromEntries(list.map((e) => [e.name, e.value]))
    if ('type' in server && server.type === 'http') return { name: server.name, spec: { type: 'http', url: server.url, headers: pairs(server.headers) } }
    if ('command' in server) return { name: server.name, spec: { type: 'stdio', command: server.command, args: server.args, env: pairs(server.env) } }
    throw invalidParams(`mcpServers[${i}] (${quote(server.name)}): transport ${quote((server as { type?: string }).type)} is not supported (stdio and http are)`)
  })
}

/** Per-session MCP servers as `mcp__<server>__<tool>`; a broken one is a notice, never fatal. */
async function mountMcp(b: AcpConnection, state: SessionState, specs: readonly McpSpec[]): Promise<void> {
  if (!specs.length) return
  const mcp = b.ctx.get('mcp')
  if (!mcp) {
    for (const s of specs) state.session.append('notice', { level: 'warn', message: `MCP server ${s.name} was not started: this dsh composition has no MCP client (@dsh/mcp/client)`, source: 'acp' })
    return
  }
  await Promise.all(specs.map((s) => mcp.mount(s.name, s.spec as never, { sessionId: state.id })))
}

/** A request's `additionalDirectories`, each checked (-32602 naming the bad one). */
function rootsOf(dirs: readonly string[] | null | undefined): string[] {
  return (dirs ?? []).map((d, i) => directory(d, `additionalDirectories[${i}]`))
}

function setRoots(state: SessionState, roots: readonly string[]): void {
  if (roots.length) state.session.append('workspace/roots', { roots: [...roots] })
}

export function modesOf(b: AcpConnection, state: SessionState): acp.SessionModeState {
  return modeState(b.ctx.permission.presets(), b.ctx.permission.current(state.session).id)
}

export function configOptionsOf(b: AcpConnection, state: SessionState): acp.SessionConfigOption[] {
  const config = state.agent.modelConfig()
  const presets = b.ctx.get('presets')
  return configOptions({
    presets: b.ctx.permission.presets(),
    mode: b.ctx.permission.current(state.session).id,
    providers: b.ctx.llm.listProviders(),
    provider: config.provider,
    model: config.model,
    effort: config.reasoningEffort,
    ...(presets ? { agents: { list: presets.list(), current: presets.current(state.session).id } } : {}),
  })
}

function describe(b: AcpConnection, state: SessionState): { modes: acp.SessionModeState; configOptions: acp.SessionConfigOption[] } {
  return { modes: modesOf(b, state), configOptions: configOptionsOf(b, state) }
}

/** `session/new`; `permissionMode` (a preset id) replaces the flag/settings default (`/clear` keeps the source session's). */
export async function newSession(b: AcpConnection, p: acp.NewSessionRequest, permissionMode?: string): Promise<acp.NewSessionResponse> {
  const cwd = directory(p.cwd, 'cwd')
  const dirs = rootsOf(p.additionalDirectories)
  const specs = mcpSpecs(p.mcpServers)
  const mode = newSessionMode(b, cwd, permissionMode)
  requireCredentials(b, defaultProvider(b))
  const session = await b.ctx.sessions.create({ cwd })
  let state: SessionState
  try {
    b.ctx.permission.set(session, mode)
    state = adopt(b, session, true)
    setRoots(state, dirs)
    await mountMcp(b, state, specs)
    await session.flush()
  } catch (error) {
    await dropState(b, session)
    throw error
  }
  release(b, state, 0)
  return { sessionId: session.id, ...describe(b, state) }
}

async function dropState(b: AcpConnection, session: Session): Promise<void> {
  const state = b.sessions.get(session.id)
  if (state?.session === session && b.sessions.drop(state)) {
    state.unanswer()
    b.ctx.agents.remove(session.id)
    await b.ctx.get('mcp')?.unmountSession(session.id)
    b.owners.release(session.id, b)
  }
  await session.close()
}

/**
 * Opens a stored session on this connection (lock + load + repair), or returns the open
 * one. Concurrent calls for one id share the opening; one racing a close of the id waits
 * for the close and opens afresh (see SessionTable).
 */
export function ensureSession(b: AcpConnection, sessionId: string): Promise<SessionState> {
  return b.sessions.open(sessionId, () => openStored(b, sessionId))
}

async function openStored(b: AcpConnection, sessionId: string): Promise<SessionState> {
  b.owners.claim(sessionId, b)
  let session: Session
  try {
    session = await b.ctx.sessions.open(sessionId)
  } catch (error) {
    b.owners.release(sessionId, b)
    throw error
  }
  const state = adopt(b, session, false)
  release(b, state, session.events.length)
  return state
}

/** `session/load` (replay: the whole log as updates, before the reply) and `session/resume` (no replay). */
export async function openSession(b: AcpConnection, p: acp.LoadSessionRequest | acp.ResumeSessionRequest, replay: boolean): Promise<acp.LoadSessionResponse> {
  directory(p.cwd, 'cwd')
  const specs = mcpSpecs(p.mcpServers)
  const known = b.sessions.get(p.sessionId)
  const state = known ?? await ensureSession(b, p.sessionId)
  if (!known) {
    setRoots(state, rootsOf(p.additionalDirectories))
    await mountMcp(b, state, specs)
  }
  if (replay) {
    for (const update of replayUpdates(state.session.events, state.wire, b.presenter)) b.send(state.id, update)
    await b.flush()
  }
  return describe(b, state)
}

export function requireState(b: AcpConnection, sessionId: string): SessionState {
  const state = b.sessions.get(sessionId)
  if (!state) throw sessionNotFound(sessionId)
  return state
}

/**
 * Cancels the session's turn, waits for it to stop (at most `waitMs` when given: on
 * shutdown the process's own teardown kills what is left, and the next open repairs
 * the log), then unmounts its MCP servers and closes it (flushed, lock released). A
 * close racing an open of the same id waits for the open and closes what it opened.
 */
export async function closeSession(b: AcpConnection, p: { sessionId: string }, waitMs?: number): Promise<acp.CloseSessionResponse> {
  const closing = b.sessions.close(p.sessionId, (state) => shutDown(b, state, waitMs))
  if (!closing) throw sessionNotFound(p.sessionId)
  await closing
  return {}
}

async function shutDown(b: AcpConnection, state: SessionState, waitMs: number | undefined): Promise<void> {
  if (state.turn) state.turn.cancelled = true
  if (state.outputTimer) clearTimeout(state.outputTimer)
  state.agent.cancel()
  let timer: NodeJS.Timeout | undefined
  await Promise.race([state.agent.idle(), ...(waitMs === undefined ? [] : [new Promise<void>((r) => { timer = setTimeout(r, waitMs) })])])
  clearTimeout(timer)
  state.unanswer()
  b.ctx.agents.remove(state.id)
  await b.ctx.get('mcp')?.unmountSession(state.id)
  await state.session.close()
  b.owners.release(state.id, b)
}

/** Cursor: base64url of the offset into the newest-first list. */
function readCursor(cursor: string | null | undefined): number {
  if (!cursor) return 0
  const offset = Number(Buffer.from(cursor, 'base64url').toString('utf8'))
  if (!Number.isInteger(offset) || offset < 0) throw invalidParams(`cursor ${quote(cursor)} is not one this agent returned`)
  return offset
}

export async function listSessions(b: AcpConnection, p: acp.ListSessionsRequest): Promise<acp.ListSessionsResponse> {
  if (p.cwd && !isAbsolute(p.cwd)) throw invalidParams(`cwd must be an absolute path, got ${quote(p.cwd)}`)
  const all = await b.ctx.sessions.list(p.cwd ? { cwd: p.cwd } : undefined)
  const offset = readCursor(p.cursor)
  const page = all.slice(offset, offset + b.options.pageSize)
  const next = offset + page.length
  return {
    sessions: page.map((s) => ({ sessionId: s.id, cwd: s.cwd, title: s.title ?? null, updatedAt: new Date(s.updatedAt).toISOString() })),
    nextCursor: next < all.length ? Buffer.from(String(next)).toString('base64url') : null,
  }
}

export async function forkSession(b: AcpConnection, p: acp.ForkSessionRequest): Promise<acp.ForkSessionResponse> {
  const ref = parseForkMeta(p._meta)
  directory(p.cwd, 'cwd')
  const specs = mcpSpecs(p.mcpServers)
  const events = b.sessions.get(p.sessionId)?.session.events ?? (await b.ctx.sessions.read(p.sessionId)).events
  const uptoSeq = ref ? forkCut(events, ref) : undefined
  const session = await b.ctx.sessions.fork(p.sessionId, { cwd: p.cwd, ...(uptoSeq !== undefined ? { uptoSeq } : {}) })
  let state: SessionState
  try {
    state = adopt(b, session, false)
    setRoots(state, rootsOf(p.additionalDirectories))
    await mountMcp(b, state, specs)
  } catch (error) {
    await dropState(b, session)
    throw error
  }
  release(b, state, session.events.length)
  return { sessionId: session.id, ...describe(b, state) }
}

export function setMode(b: AcpConnection, p: acp.SetSessionModeRequest): acp.SetSessionModeResponse {
  const state = requireState(b, p.sessionId)
  state.quiet = false
  b.ctx.permission.set(state.session, p.modeId)
  return {}
}

export function setConfigOption(b: AcpConnection, p: acp.SetSessionConfigOptionRequest): acp.SetSessionConfigOptionResponse {
  const state = requireState(b, p.sessionId)
  state.quiet = false
  const value = p.value
  if (typeof value !== 'string') throw invalidParams(`config option ${quote(p.configId)} takes a string value`)
  const { agent, session } = state
  switch (p.configId) {
    case MODE_CONFIG_ID:
      b.ctx.permission.set(session, value)
      break
    case MODEL_CONFIG_ID: {
      const selected = parseModelValue(b.ctx.llm.listProviders(), value)
      if (!selected) throw invalidParams(`unknown model ${quote(value)}`)
      agent.setModel(selected)
      break
    }
    case EFFORT_CONFIG_ID: {
      if (!(EFFORT_VALUES as readonly string[]).includes(value)) throw invalidParams(`unknown reasoning effort ${quote(value)} (one of ${EFFORT_VALUES.join(', ')})`)
      const { provider, model } = agent.modelConfig()
      if (value === 'default') {
        // setModel keeps the previous effort; log a selection without one
        agent.options = { ...agent.options, reasoningEffort: undefined }
        session.append('model/select', { provider, model })
      } else {
        agent.setModel({ provider, model, reasoningEffort: value as ReasoningEffort })
      }
      break
    }
    case AGENT_CONFIG_ID: {
      const presets = b.ctx.get('presets')
      if (!presets) throw invalidParams('this composition has no agent presets')
      try {
        presets.set(session, value)
      } catch (error) {
        throw invalidParams(error instanceof DshError ? error.message : String(error))
      }
      // only before the first turn: the new agent takes the preset's tools and model (flags still win)
      state.agent = b.ctx.agents.create(session, agentOptions(b, session, true))
      b.sendConfig(state)
      break
    }
    default:
      throw invalidParams(`unknown config option ${quote(p.configId)}`)
  }
  return { configOptions: configOptionsOf(b, state) }
}
