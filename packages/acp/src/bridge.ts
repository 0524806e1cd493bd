import * as acp from '@agentclientprotocol/sdk/unstable'
import type { Context } from '@deepseek-ai/cordis'
import { presentCall, presentResult, type Agent, type Session, type ToolInvocation, type ToolOutcome, type ToolProgress, type TurnOutcome } from '@dsh/core'
import type { Json, SessionEvent, Usage } from '@dsh/protocol'
import { authMethods, authenticate, logout } from './auth.js'
import { CancelEpochs } from './cancels.js'
import type { AcpConnection, ConnectionOptions, SessionOwners } from './connection.js'
import { toRequestError } from './errors.js'
import { closeSession, configOptionsOf, forkSession, listSessions, newSession, openSession, setConfigOption, setMode } from './sessions.js'
import { turnOpen, type SessionState } from './state.js'
import { parseSteering, STEERING_METHOD, type SteeringParams } from './steering.js'
import { SessionTable } from './table.js'
import { cancel, prompt, steer } from './turn.js'
import type { Presenter } from './translate.js'

/** How long closing a connection waits for running turns to stop (then the host's teardown kills the rest). */
const CLOSE_WAIT_MS = 800

/** Coalescing window for live command output. */
const OUTPUT_FLUSH_MS = 40

/**
 * One ACP connection, composed: the SDK agent app over a stream (its readable tapped so
 * cancels apply in arrival order), the session table, the per-session turn queues
 * (in each SessionState), and the projection of session events to `session/update`.
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

  constructor(readonly ctx: Context, readonly owners: SessionOwners, readonly options: ConnectionOptions) {
    this.presenter = {
      call: (name, args) => presentCall(ctx.tools.get(name), name, args),
      result: (name, args, result) => presentResult(ctx.tools.get(name), args, result),
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
      ctx.on('session/event', (session: Session, event: SessionEvent) => this.onEvent(session, event)),
      ctx.on('agent/tool-progress', (agent: Agent, callId: string, update: ToolProgress) => this.onProgress(agent, callId, update)),
      ctx.on('agent/turn-end', (agent: Agent, outcome: TurnOutcome) => {
        const state = this.sessions.get(agent.session.id)
        if (state?.agent === agent) state.lastOutcome = outcome
      }),
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

  private onEvent(session: Session, event: SessionEvent): void {
    const state = this.sessions.get(session.id)
    if (!state || state.session !== session) return
    if (event.type === 'tool/result') this.flushOutput(state, (event.data as { callId: string }).callId)
    const updates = state.live.push(event)
    const open = turnOpen(state)
    const data = event.data as Record<string, Json>
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
    }
    if (open) for (const update of updates) this.sendTurn(state, update)
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
    const config = state.agent.modelConfig()
    const size = this.ctx.llm.modelInfo(config.provider, config.model).contextWindow
    this.send(state.id, { sessionUpdate: 'usage_update', used: usage.inputTokens + usage.outputTokens, size })
  }

  private onProgress(agent: Agent, callId: string, update: ToolProgress): void {
    const state = this.sessions.get(agent.session.id)
    if (!state || state.agent !== agent || update.type !== 'output') return
    state.pendingOutput.set(callId, (state.pendingOutput.get(callId) ?? '') + update.data)
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

  /** Closes every session of this connection, open or opening (cancelling running turns), and the connection. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const dispose of this.disposers.splice(0)) dispose()
      this.connection?.close()
      // sessions still being opened are closed once open (never left locked)
      await Promise.allSettled(this.sessions.ids().map((sessionId) => closeSession(this, { sessionId }, CLOSE_WAIT_MS)))
    })()
    return this.closing
  }
}
