import * as acp from '@agentclientprotocol/sdk/unstable'
import type { Context } from '@deepseek-ai/cordis'
import { presentCall, presentResult, type ToolInvocation, type ToolOutcome } from '@dsh/core'
import type { HostClient, HostConnection, NotificationParams } from '@dsh/host'
import { DshError, type ErrorInfo, type Json, type SessionEvent, type Usage } from '@dsh/protocol'
import { authMethods, authenticate, logout } from './auth.js'
import { CancelEpochs } from './cancels.js'
import type { AcpConnection, ConnectionOptions } from './connection.js'
import { toRequestError } from './errors.js'
import { askPermission, askQuestions } from './permission.js'
import { closeSession, configOptionsOf, forkSession, listSessions, newSession, openSession, setConfigOption, setMode } from './sessions.js'
import { turnOpen, type SessionState } from './state.js'
import { parseSteering, STEERING_METHOD, type SteeringParams } from './steering.js'
import { SessionTable } from './table.js'
import { cancel, prompt, steer } from './turn.js'
import type { EventCards, Presenter } from './translate.js'

/** How long closing a connection waits for its sessions to close (then the process's teardown kills the rest). */
const CLOSE_WAIT_MS = 1500

/** At most this many sessions' (and events per session) are kept from before their state exists. */
const EARLY_MAX = 512

/** Coalescing window for live command output. */
const OUTPUT_FLUSH_MS = 40

/**
 * One ACP connection, composed: the SDK agent app over a stream (its readable tapped so
 * cancels apply in arrival order), a client of the host (`ctx.host.connect`: it owns the
 * sessions, answers their approvals and questions), the session table, the per-session
 * reply queues (in each SessionState), and the projection of the host's durable
 * `session/event`s (with their views) and `session/output` to `session/update`.
 * Every outgoing notification goes through one ordered outbox, so a prompt's reply (sent
 * after `flush()`) follows every update of its turn. The request handlers see this
 * object only through `AcpConnection`; only the server imports this module.
 */
export class Bridge implements AcpConnection {
  readonly sessions = new SessionTable()
  readonly epochs = new CancelEpochs()
  caps: acp.ClientCapabilities = {}
  /** Set by `gateway` authentication: the provider new sessions use on this connection. */
  providerOverride: string | undefined
  readonly presenter: Presenter
  private connection: acp.AgentConnection | undefined
  private outbox: Promise<void> = Promise.resolve()
  private readonly disposers: (() => void)[] = []
  private closing: Promise<void> | undefined

  readonly host: HostConnection
  private readonly early = new Map<string, [SessionEvent, EventCards | null][]>()

  constructor(readonly ctx: Context, readonly options: ConnectionOptions) {
    this.presenter = {
      call: (name, args) => presentCall(ctx.tools.get(name), name, args),
      result: (name, args, result) => presentResult(ctx.tools.get(name), args, result),
    }
    this.host = ctx.host.connect(this.hostClient())
  }

  /** This connection as the host's client: approvals and questions become permission requests; no client tools. */
  private hostClient(): HostClient {
    return {
      name: 'acp',
      capabilities: { approvals: true, questions: true, tools: false },
      notify: (method, params) => {
        if (method === 'session/event') {
          const p = params as NotificationParams<'session/event'>
          this.onEvent(p.sessionId, p.event as SessionEvent, p.view as EventCards | null)
        } else if (method === 'session/status') {
          const p = params as NotificationParams<'session/status'>
          const state = this.sessions.get(p.sessionId)
          if (!state) return
          state.status = p.status
          if (p.error) state.failure = p.error as ErrorInfo
          state.changed()
        } else if (method === 'session/output') {
          const p = params as NotificationParams<'session/output'>
          this.onProgress(p.sessionId, p.toolCallId, p.data)
        }
      },
      request: (method, params, signal) => {
        const state = this.sessions.get(params.sessionId)
        if (!state) return Promise.reject(new DshError('SESSION_NOT_OPEN', `session ${params.sessionId} is not open on this ACP connection`))
        if (method === 'approval/request') return askPermission(this, state, params as never, signal) as never
        if (method === 'question/request') return askQuestions(this, state, params as never, signal) as never
        return Promise.reject(new DshError('NOT_SUPPORTED', 'ACP clients define no tools'))
      },
    }
  }

  get client(): acp.AgentContext {
    if (!this.connection) throw new Error('the bridge is not connected')
    return this.connection.client
  }

  get signal(): AbortSignal | undefined {
    return this.connection?.signal
  }

  get closed(): Promise<void> {
    return this.connection?.closed ?? Promise.resolve()
  }

  connect(stream: acp.Stream): acp.AgentConnection {
    const { ctx } = this
    this.disposers.push(
      // the body starts (after approval and guards): `in_progress` (not a session event)
      ctx.on('tools/execute', async (call: ToolInvocation, next: () => Promise<ToolOutcome>) => {
        const state = this.sessions.get(call.sessionId)
        if (state && turnOpen(state)) for (const update of state.live.started(call.callId)) this.sendTurn(state, update)
        return next()
      }),
      ctx.on('commands/changed', () => { for (const state of this.sessions.values()) this.sendCommands(state) }),
    )
    const app = this.buildApp()
    const arrivals = new TransformStream<acp.AnyMessage, acp.AnyMessage>({ transform: (frame, out) => { this.arrived(frame); out.enqueue(frame) } })
    this.connection = app.connect({ readable: stream.readable.pipeThrough(arrivals), writable: stream.writable })
    void this.connection.closed.then(() => this.close())
    return this.connection
  }

  /** Every incoming frame, in read order, before any handler sees it: cancels apply here. */
  private arrived(frame: acp.AnyMessage): void {
    const cancelled = this.epochs.observe(frame)
    if (cancelled === undefined) return
    this.debug(`<- session/cancel ${cancelled.slice(0, 80)}`)
    try {
      cancel(this, cancelled)
    } catch (error) {
      this.debug(`session/cancel failed: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  private buildApp(): acp.AgentApp {
    const m = acp.methods.agent
    const handle = <P, R>(method: string, run: (params: P, request: { signal: AbortSignal; requestId: acp.JsonRpcId }) => Promise<R> | R) =>
      async (c: { params: P; signal: AbortSignal; requestId: acp.JsonRpcId }) => {
        this.debug(`<- ${method} #${String(c.requestId)}`)
        try {
          return await run(c.params, c)
        } catch (error) {
          const sessionId = (c.params as { sessionId?: unknown } | undefined)?.sessionId
          const mapped = toRequestError(error, { ...(typeof sessionId === 'string' ? { sessionId } : {}), authMethods: authMethods(this) })
          this.debug(`-> ${method} #${String(c.requestId)} error ${mapped.code}: ${mapped.message}`)
          throw mapped
        }
      }
    return acp.agent({ name: 'dsh' })
      .onRequest(m.initialize, handle(m.initialize, (p: acp.InitializeRequest) => this.initialize(p)))
      .onRequest(m.authenticate, handle(m.authenticate, (p: acp.AuthenticateRequest, r) => authenticate(this, p, r)))
      .onRequest(m.logout, handle(m.logout, (p: acp.LogoutRequest) => logout(this, p)))
      .onRequest(m.session.new, handle(m.session.new, (p: acp.NewSessionRequest) => newSession(this, p)))
      .onRequest(m.session.load, handle(m.session.load, (p: acp.LoadSessionRequest) => openSession(this, p, true)))
      .onRequest(m.session.resume, handle(m.session.resume, (p: acp.ResumeSessionRequest) => openSession(this, p, false)))
      .onRequest(m.session.list, handle(m.session.list, (p: acp.ListSessionsRequest) => listSessions(this, p)))
      .onRequest(m.session.close, handle(m.session.close, (p: acp.CloseSessionRequest) => closeSession(this, p)))
      .onRequest(m.session.fork, handle(m.session.fork, (p: acp.ForkSessionRequest) => forkSession(this, p)))
      .onRequest(m.session.setMode, handle(m.session.setMode, (p: acp.SetSessionModeRequest) => setMode(this, p)))
      .onRequest(m.session.setConfigOption, handle(m.session.setConfigOption, (p: acp.SetSessionConfigOptionRequest) => setConfigOption(this, p)))
      .onRequest(m.session.prompt, handle(m.session.prompt, (p: acp.PromptRequest, r) => prompt(this, p, r.requestId)))
      .onRequest(STEERING_METHOD, parseSteering, handle(STEERING_METHOD, (p: SteeringParams) => steer(this, p)))
      // applied on arrival (see `arrived`): the SDK may run this after a later frame's handler
      .onNotification(m.session.cancel, () => undefined)
  }

  private initialize(params: acp.InitializeRequest): acp.InitializeResponse {
    this.caps = params.clientCapabilities ?? {}
    const mcp = !!this.ctx.get('mcp')
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentInfo: { name: 'dsh', title: 'dsh', version: this.options.version },
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        mcpCapabilities: { http: mcp, sse: false },
        sessionCapabilities: { list: {}, resume: {}, close: {}, fork: {}, additionalDirectories: {} },
        auth: { logout: {} },
        _meta: {
          dsh: { runtime: { version: this.options.version, source: 'host' } },
          steering: { supported: true, method: STEERING_METHOD },
          jetbrains: { air: { fork: { version: 1, inclusive: true } } },
        },
      },
      authMethods: authMethods(this),
    }
  }

  /** The client declared Zed's terminal cards (seed 000). */
  get terminalCards(): boolean {
    return (this.caps._meta as { terminal_output?: unknown } | null | undefined)?.terminal_output === true
  }

  /** Queues a `session/update` behind every earlier one. */
  send(sessionId: string, update: acp.SessionUpdate): void {
    this.debug(`-> session/update ${sessionId} ${update.sessionUpdate}`)
    this.outbox = this.outbox
      .then(() => this.connection && !this.connection.signal.aborted ? this.client.notify(acp.methods.client.session.update, { sessionId, update }) : undefined)
      .catch((error: unknown) => this.debug(`session/update failed: ${error instanceof Error ? error.message : String(error)}`))
  }

  /** Runs `dispose` when the connection closes. */
  own(dispose: () => unknown): void {
    this.disposers.push(() => { void dispose() })
  }

  /** Resolves once every update queued so far is written. */
  flush(): Promise<void> {
    return this.outbox
  }

  debug(line: string): void {
    this.options.debug?.(line)
  }

  sendCommands(state: SessionState): void {
    const commands = this.ctx.get('commands')
    const list = commands ? commands.list().map((c) => ({ name: c.name, description: c.description, ...(c.argumentHint ? { input: { hint: c.argumentHint } } : {}) })) : []
    this.send(state.id, { sessionUpdate: 'available_commands_update', availableCommands: list })
  }

  /** A turn update: keeps the token's record of shown, started and finished calls. */
  private sendTurn(state: SessionState, update: acp.SessionUpdate): void {
    const token = state.turn
    if (token && update.sessionUpdate === 'tool_call') token.unfinished.add(update.toolCallId)
    if (token && update.sessionUpdate === 'tool_call_update') {
      if (update.status === 'in_progress') token.started.add(update.toolCallId)
      if (update.status === 'completed' || update.status === 'failed') token.unfinished.delete(update.toolCallId)
    }
    this.send(state.id, update)
  }

  /** Feeds a state just put into the table what the host sent of its session before (while it was created or opened). */
  adopted(state: SessionState): void {
    const early = this.early.get(state.id)
    this.early.delete(state.id)
    for (const [event, view] of early ?? []) this.onEvent(state.id, event, view)
  }

  /** A durable event of a session open here (the host's `session/event`), in seq order, each once. */
  private onEvent(sessionId: string, event: SessionEvent, view: EventCards | null): void {
    const state = this.sessions.get(sessionId)
    if (!state) {
      // a session being created or opened on this connection: kept (bounded) until `adopted`
      const list = this.early.get(sessionId) ?? []
      if (list.length < EARLY_MAX) list.push([event, view])
      this.early.delete(sessionId)
      this.early.set(sessionId, list)
      if (this.early.size > EARLY_MAX) this.early.delete(this.early.keys().next().value!)
      return
    }
    if (state.closed) return
    if (event.type === 'tool/result') this.flushOutput(state, (event.data as { callId: string }).callId)
    const updates = state.live.push(event, view)
    const data = event.data as Record<string, Json>
    this.follow(state, event.type, data)
    if (event.seq <= state.setupSeq) {
      // logged while the session was set up: its notices go out on release, the rest was described in the reply
      if (event.type === 'notice') state.setupNotices.push({ level: data.level as string, message: data.message as string })
      return
    }
    const open = turnOpen(state)
    switch (event.type) {
      case 'permission/preset':
        if (!state.quiet) {
          this.send(state.id, { sessionUpdate: 'current_mode_update', currentModeId: data.preset as string })
          this.sendConfig(state)
        }
        return
      case 'model/select':
      case 'agent/preset':
        if (!state.quiet) this.sendConfig(state)
        return
      case 'session/title':
        if (!state.quiet) this.send(state.id, { sessionUpdate: 'session_info_update', title: data.title as string, updatedAt: new Date(event.time).toISOString() })
        return
      case 'notice':
        if (open || !state.quiet) this.sendNotice(state, data.level as string, data.message as string)
        return
      case 'step/end':
        if (open && data.usage) this.sendUsage(state, data.usage as unknown as Usage)
        return
      case 'turn/end':
        state.changed()
        return
    }
    if (open) for (const update of updates) this.sendTurn(state, update)
  }

  /** What the host's log says of the session's config and turns: kept in the state (the turn's token learns its turn and end). */
  private follow(state: SessionState, type: string, data: Record<string, Json>): void {
    const token = state.turn
    switch (type) {
      case 'permission/preset':
        state.config = { ...state.config, permissionMode: data.preset as string }
        break
      case 'model/select':
        state.config = { ...state.config, provider: data.provider as string, model: data.model as string, reasoningEffort: (data.reasoningEffort ?? null) as never }
        break
      case 'agent/preset':
        state.config = { ...state.config, agentPreset: data.preset as string }
        break
      case 'session/title':
        state.title = data.title as string
        break
      case 'turn/start':
        if (token) token.turn = data.turn as number
        break
      case 'turn/end':
        if (token && token.turn === data.turn) token.end = { reason: data.reason as never, error: data.error as ErrorInfo | undefined }
        break
    }
  }

  sendConfig(state: SessionState): void {
    this.send(state.id, { sessionUpdate: 'config_option_update', configOptions: configOptionsOf(this, state) })
  }

  sendNotice(state: SessionState, level: string, message: string): void {
    if (this.caps.session?.notices) {
      this.send(state.id, { sessionUpdate: 'notice', severity: level === 'warn' ? 'warning' : level, title: message })
    } else {
      this.send(state.id, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `\n> ${level === 'error' ? 'Error' : 'Note'}: ${message}\n` } })
    }
  }

  private sendUsage(state: SessionState, usage: Usage): void {
    const token = state.turn!
    token.usage.steps++
    token.usage.input += usage.inputTokens
    token.usage.output += usage.outputTokens
    token.usage.thought += usage.reasoningTokens ?? 0
    token.usage.cacheRead += usage.cacheReadTokens ?? 0
    token.usage.cacheWrite += usage.cacheWriteTokens ?? 0
    const { provider, model } = state.config
    const size = this.ctx.llm.modelInfo(provider, model).contextWindow
    this.send(state.id, { sessionUpdate: 'usage_update', used: usage.inputTokens + usage.outputTokens, size })
  }

  /** Live output of a running call (the host's `session/output`), coalesced. */
  private onProgress(sessionId: string, callId: string, data: string): void {
    const state = this.sessions.get(sessionId)
    if (!state || state.closed) return
    state.pendingOutput.set(callId, (state.pendingOutput.get(callId) ?? '') + data)
    state.outputTimer ??= setTimeout(() => {
      state.outputTimer = undefined
      this.flushOutput(state)
    }, OUTPUT_FLUSH_MS)
  }

  /** Sends coalesced live output (of one call, or of all). */
  private flushOutput(state: SessionState, callId?: string): void {
    const ids = callId === undefined ? [...state.pendingOutput.keys()] : [callId]
    for (const id of ids) {
      const data = state.pendingOutput.get(id)
      if (data === undefined) continue
      state.pendingOutput.delete(id)
      const updates = state.live.progress(id, data)
      if (turnOpen(state)) for (const update of updates) this.sendTurn(state, update)
    }
    if (!state.pendingOutput.size && state.outputTimer) {
      clearTimeout(state.outputTimer)
      state.outputTimer = undefined
    }
  }

  /**
   * Closes every session of this connection, open or opening (running turns cancelled), and
   * the host client; waits at most CLOSE_WAIT_MS (the process's teardown kills what is left,
   * and the next open repairs the log).
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const dispose of this.disposers.splice(0)) dispose()
      this.connection?.close()
      // sessions still being opened are closed once open (never left locked)
      const all = Promise.allSettled(this.sessions.ids().map((sessionId) => closeSession(this, { sessionId }))).then(() => this.host.close())
      let timer: NodeJS.Timeout | undefined
      await Promise.race([all, new Promise<void>((resolve) => { timer = setTimeout(resolve, CLOSE_WAIT_MS) })])
      clearTimeout(timer)
    })()
    return this.closing
  }
}
