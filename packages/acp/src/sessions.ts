import { isAbsolute } from 'node:path'
import type * as acp from '@agentclientprotocol/sdk/unstable'
import type { ParamsOf, ResultOf } from '@dsh/host-api'
import { isDshError, type SessionEvent } from '@dsh/protocol'
import { authMethods } from './auth.js'
import type { AcpConnection } from './connection.js'
import { defaultProvider } from './defaults.js'
import {
  AGENT_CONFIG_ID, EFFORT_CONFIG_ID, EFFORT_VALUES, MODE_CONFIG_ID, MODEL_CONFIG_ID, configOptions, modeState, parseModelValue,
} from './config.js'
import { authRequired, invalidParams, sessionNotFound } from './errors.js'
import { forkCut, parseForkMeta } from './fork.js'
import { replayUpdates } from './history.js'
import { TurnQueue } from './queue.js'
import type { SessionState } from './state.js'
import { SessionProjector } from './translate.js'
import { quote } from './quote.js'

type Detail = ResultOf<'session/get'>['session']
type McpServers = NonNullable<ParamsOf<'session/create'>['mcpServers']>

/** ACP's own wire rule for `cwd` of load/resume/fork (the host checks the workspace itself). */
function absolute(path: string, field: string): string {
  if (!isAbsolute(path)) throw invalidParams(`${field} must be an absolute path, got ${quote(path)}`)
  return path
}

/** Takes a host session onto this connection: its live projection and what ACP adds. Held back (`quiet`) until `release`. */
function adopt(b: AcpConnection, detail: Detail): SessionState {
  const wire = { terminalOutput: b.terminalCards, cwd: detail.workspace }
  const state: SessionState = {
    id: detail.id, cwd: detail.workspace, config: detail.config, title: detail.title ?? undefined, wire,
    live: new SessionProjector(wire, b.presenter, 'live'), turn: undefined, queue: new TurnQueue(), quiet: true,
    setupSeq: detail.lastSeq, setupNotices: [], status: detail.status, failure: undefined, changed: () => undefined,
    pendingOutput: new Map(), outputTimer: undefined, disposers: [], closed: false,
  }
  b.sessions.set(state)
  b.adopted(state)
  return state
}

/** After the reply (and after the host's replay of what setting up logged): commands, title, the notices logged meanwhile. */
function release(b: AcpConnection, state: SessionState): void {
  setImmediate(() => {
    if (b.sessions.get(state.id) !== state) return
    state.quiet = false
    b.sendCommands(state)
    if (state.title) b.send(state.id, { sessionUpdate: 'session_info_update', title: state.title })
    for (const { level, message } of state.setupNotices.splice(0)) b.sendNotice(state, level, message)
  })
}

/** ACP MCP servers → the host's specs (stdio and http); anything else is -32602 before anything runs. */
function mcpSpecs(servers: readonly acp.McpServer[] | undefined): McpServers {
  const out: McpServers = {}
  ;(servers ?? []).forEach((server, i) => {
    const pairs = (list: readonly { name: string; value: string }[]) => Object.fromEntries(list.map((e) => [e.name, e.value]))
    if ('type' in server && server.type === 'http') out[server.name] = { type: 'http', url: server.url, headers: pairs(server.headers) }
    else if ('command' in server) out[server.name] = { type: 'stdio', command: server.command, args: [...server.args], env: pairs(server.env) }
    else throw invalidParams(`mcpServers[${i}] (${quote(server.name)}): transport ${quote((server as { type?: string }).type)} is not supported (stdio and http are)`)
  })
  return out
}

/**
 * MCP servers for a session opened (load/resume) or forked here: the host takes them only at
 * creation, so ACP mounts them for the session and unmounts them when it is released here.
 * A broken one is a notice, never fatal; without an MCP client each is a notice.
 */
async function mountMcp(b: AcpConnection, state: SessionState, specs: McpServers): Promise<void> {
  const entries = Object.entries(specs)
  if (!entries.length) return
  const mcp = b.ctx.get('mcp')
  if (!mcp) {
    for (const [name] of entries) b.sendNotice(state, 'warn', `MCP server ${name} was not started: this dsh composition has no MCP client (@dsh/mcp/client)`)
    return
  }
  state.disposers.push(() => mcp.unmountSession(state.id))
  await Promise.all(entries.map(([name, spec]) => mcp.mount(name, spec as never, { sessionId: state.id })))
}

export function modesOf(b: AcpConnection, state: SessionState): acp.SessionModeState {
  return modeState(b.ctx.permission.presets(), state.config.permissionMode)
}

export function configOptionsOf(b: AcpConnection, state: SessionState): acp.SessionConfigOption[] {
  const { config } = state
  const presets = b.ctx.get('presets')
  return configOptions({
    presets: b.ctx.permission.presets(),
    mode: config.permissionMode,
    providers: b.ctx.llm.listProviders(),
    provider: config.provider,
    model: config.model,
    effort: config.reasoningEffort ?? undefined,
    ...(presets && config.agentPreset ? { agents: { list: presets.list(), current: config.agentPreset } } : {}),
  })
}

function describe(b: AcpConnection, state: SessionState): { modes: acp.SessionModeState; configOptions: acp.SessionConfigOption[] } {
  return { modes: modesOf(b, state), configOptions: configOptionsOf(b, state) }
}

/** Runs `call`; a missing key is looked up again (the credential file may have changed) before it is auth_required. */
async function withCredentials<T>(b: AcpConnection, provider: () => string, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    if (!isDshError(error, 'NO_CREDENTIALS')) throw error
  }
  b.ctx.credentials.reload()
  try {
    return await call()
  } catch (error) {
    if (!isDshError(error, 'NO_CREDENTIALS')) throw error
    throw authRequired(error.message, authMethods(b), provider())
  }
}

/**
 * `session/new` through the host's `session/create`: the host resolves the defaults (this
 * process's flags are explicit choices, as headless passes its flags), checks the
 * workspace and the key, mounts the MCP servers and roots. `permissionMode` (`/clear`)
 * replaces the flag.
 */
export async function newSession(b: AcpConnection, p: acp.NewSessionRequest, permissionMode?: string): Promise<acp.NewSessionResponse> {
  const d = b.options.defaults
  const mcpServers = mcpSpecs(p.mcpServers)
  const provider = b.providerOverride ?? d.provider
  const params: ParamsOf<'session/create'> = {
    workspace: p.cwd,
    ...(provider ? { provider } : {}), ...(d.model ? { model: d.model } : {}),
    ...(d.reasoningEffort ? { reasoningEffort: d.reasoningEffort } : {}), ...(d.maxTokens ? { maxTokens: d.maxTokens } : {}),
    ...(permissionMode ?? d.permissionMode ? { permissionMode: permissionMode ?? d.permissionMode } : {}),
    ...(p.additionalDirectories?.length ? { roots: [...p.additionalDirectories] } : {}),
    ...(Object.keys(mcpServers).length ? { mcpServers } : {}),
  }
  const { session } = await withCredentials(b, () => defaultProvider(b), () => b.host.call('session/create', params))
  const state = adopt(b, session)
  release(b, state)
  return { sessionId: session.id, ...describe(b, state) }
}

/** A session the host already opened for this connection (`/clear`'s new one): taken into the table. */
export async function adoptOpen(b: AcpConnection, sessionId: string): Promise<void> {
  const { session } = await b.host.call('session/get', { sessionId })
  release(b, adopt(b, session))
}

/**
 * Opens a stored session on this connection (the host's `session/open`: lock, load,
 * repair), or returns the open one. This process's flags apply as changes (as headless
 * `--resume` does). Concurrent calls for one id share the opening; one racing a close of
 * the id waits for the close and opens afresh (see SessionTable).
 */
export function ensureSession(b: AcpConnection, sessionId: string): Promise<SessionState> {
  return b.sessions.open(sessionId, () => openStored(b, sessionId))
}

async function openStored(b: AcpConnection, sessionId: string): Promise<SessionState> {
  const d = b.options.defaults
  const { session } = await b.host.call('session/open', { sessionId, ...(d.maxTokens ? { maxTokens: d.maxTokens } : {}) })
  const state = adopt(b, session)
  try {
    if (d.provider || d.model) {
      state.config = (await b.host.call('session/set_model', {
        sessionId, ...(d.provider ? { provider: d.provider } : {}), ...(d.model ? { model: d.model } : {}),
        ...(d.reasoningEffort ? { reasoningEffort: d.reasoningEffort } : {}),
      })).config
    } else if (d.reasoningEffort) {
      state.config = (await b.host.call('session/set_effort', { sessionId, reasoningEffort: d.reasoningEffort })).config
    }
  } catch (error) {
    await shutDown(b, state)
    b.sessions.drop(state)
    throw error
  }
  release(b, state)
  return state
}

/** The whole durable log with its views, in pages (for `session/load` and fork cuts). */
async function history(b: AcpConnection, sessionId: string): Promise<ResultOf<'session/history'>['items']> {
  const items: ResultOf<'session/history'>['items'] = []
  for (let afterSeq = -1; ;) {
    const page = await b.host.call('session/history', { sessionId, afterSeq, limit: 5000 })
    items.push(...page.items)
    if (!page.hasMore || !page.items.length) return items
    afterSeq = page.items.at(-1)!.event.seq
  }
}

/** `session/load` (replay: the whole log as updates, before the reply) and `session/resume` (no replay). */
export async function openSession(b: AcpConnection, p: acp.LoadSessionRequest | acp.ResumeSessionRequest, replay: boolean): Promise<acp.LoadSessionResponse> {
  absolute(p.cwd, 'cwd')
  const specs = mcpSpecs(p.mcpServers)
  const known = b.sessions.get(p.sessionId)
  const state = known ?? await ensureSession(b, p.sessionId)
  if (!known) await addExtras(b, state, p.additionalDirectories, specs)
  if (replay) {
    const items = await history(b, state.id)
    for (const update of replayUpdates(items.map((i) => i.event as SessionEvent), state.wire, b.presenter, items.map((i) => i.view))) b.send(state.id, update)
    await b.flush()
  }
  return describe(b, state)
}

/** Extra roots and MCP servers of a load/resume/fork (the host's open and fork take neither). */
async function addExtras(b: AcpConnection, state: SessionState, dirs: readonly string[] | null | undefined, specs: McpServers): Promise<void> {
  const roots = (dirs ?? []).map((d, i) => absolute(d, `additionalDirectories[${i}]`))
  if (roots.length) b.ctx.sessions.get(state.id)?.append('workspace/roots', { roots })
  await mountMcp(b, state, specs)
}

export function requireState(b: AcpConnection, sessionId: string): SessionState {
  const state = b.sessions.get(sessionId)
  if (!state) throw sessionNotFound(sessionId)
  return state
}

/**
 * The host's `session/close` (cancel, wait for the turn to stop, flush, unlock) and what
 * ACP added (MCP servers of a load). A close racing an open of the same id waits for the
 * open and closes what it opened.
 */
export async function closeSession(b: AcpConnection, p: { sessionId: string }): Promise<acp.CloseSessionResponse> {
  const closing = b.sessions.close(p.sessionId, (state) => shutDown(b, state))
  if (!closing) throw sessionNotFound(p.sessionId)
  await closing
  return {}
}

async function shutDown(b: AcpConnection, state: SessionState): Promise<void> {
  if (state.turn) state.turn.cancelled = true
  if (state.outputTimer) clearTimeout(state.outputTimer)
  try {
    await b.host.call('session/close', { sessionId: state.id })
  } finally {
    state.closed = true
    state.changed()
    for (const dispose of state.disposers.splice(0).reverse()) await Promise.resolve().then(dispose).catch(() => undefined)
  }
}

export async function listSessions(b: AcpConnection, p: acp.ListSessionsRequest): Promise<acp.ListSessionsResponse> {
  if (p.cwd && !isAbsolute(p.cwd)) throw invalidParams(`cwd must be an absolute path, got ${quote(p.cwd)}`)
  const page = await b.host.call('session/list', { ...(p.cwd ? { workspace: p.cwd } : {}), ...(p.cursor ? { cursor: p.cursor } : {}), limit: Math.min(b.options.pageSize, 200) })
  return {
    sessions: page.sessions.map((s) => ({ sessionId: s.id, cwd: s.workspace, title: s.title ?? null, updatedAt: new Date(s.updatedAt).toISOString() })),
    nextCursor: page.nextCursor,
  }
}

/** `session/fork` through the host's: whole, or cut inclusively at `_meta.jetbrains.air.fork`'s message. */
export async function forkSession(b: AcpConnection, p: acp.ForkSessionRequest): Promise<acp.ForkSessionResponse> {
  const ref = parseForkMeta(p._meta)
  absolute(p.cwd, 'cwd')
  const specs = mcpSpecs(p.mcpServers)
  const atSeq = ref ? forkCut((await readLog(b, p.sessionId)), ref) : undefined
  const { session } = await b.host.call('session/fork', { sessionId: p.sessionId, workspace: p.cwd, ...(atSeq !== undefined ? { atSeq } : {}) })
  const state = adopt(b, session)
  try {
    await addExtras(b, state, p.additionalDirectories, specs)
  } catch (error) {
    await shutDown(b, state)
    b.sessions.drop(state)
    throw error
  }
  release(b, state)
  return { sessionId: session.id, ...describe(b, state) }
}

/** A session's durable events: through the host when it is open here, else the stored log. */
async function readLog(b: AcpConnection, sessionId: string) {
  if (b.sessions.get(sessionId)) return (await history(b, sessionId)).map((i) => i.event as SessionEvent)
  return (await b.ctx.sessions.read(sessionId)).events
}

export async function setMode(b: AcpConnection, p: acp.SetSessionModeRequest): Promise<acp.SetSessionModeResponse> {
  const state = requireState(b, p.sessionId)
  state.quiet = false
  state.config = (await b.host.call('session/set_mode', { sessionId: state.id, permissionMode: p.modeId })).config
  return {}
}

export async function setConfigOption(b: AcpConnection, p: acp.SetSessionConfigOptionRequest): Promise<acp.SetSessionConfigOptionResponse> {
  const state = requireState(b, p.sessionId)
  state.quiet = false
  const value = p.value
  if (typeof value !== 'string') throw invalidParams(`config option ${quote(p.configId)} takes a string value`)
  const sessionId = state.id
  switch (p.configId) {
    case MODE_CONFIG_ID:
      state.config = (await b.host.call('session/set_mode', { sessionId, permissionMode: value })).config
      break
    case MODEL_CONFIG_ID: {
      const selected = parseModelValue(b.ctx.llm.listProviders(), value)
      if (!selected) throw invalidParams(`unknown model ${quote(value)}`)
      state.config = (await b.host.call('session/set_model', { sessionId, provider: selected.provider, model: selected.model })).config
      break
    }
    case EFFORT_CONFIG_ID: {
      if (!(EFFORT_VALUES as readonly string[]).includes(value)) throw invalidParams(`unknown reasoning effort ${quote(value)} (one of ${EFFORT_VALUES.join(', ')})`)
      const reasoningEffort = value === 'default' ? null : value as NonNullable<ParamsOf<'session/set_effort'>['reasoningEffort']>
      state.config = (await b.host.call('session/set_effort', { sessionId, reasoningEffort })).config
      break
    }
    case AGENT_CONFIG_ID: {
      if (!b.ctx.get('presets')) throw invalidParams('this composition has no agent presets')
      // only before the first turn (the host's rule): the preset's tools and model apply from now on
      state.config = (await b.host.call('session/set_preset', { sessionId, agentPreset: value })).config
      b.sendConfig(state)
      break
    }
    default:
      throw invalidParams(`unknown config option ${quote(p.configId)}`)
  }
  return { configOptions: configOptionsOf(b, state) }
}
