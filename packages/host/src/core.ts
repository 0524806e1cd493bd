import type { Context } from '@deepseek-ai/cordis'
import { latestTitle, type AgentOptions, type PresetService, type Session } from '@dsh/core'
import type { ApprovalOutcome, ApprovalRequest, Json } from '@dsh/protocol'
import { DshError, isDshError } from '@dsh/protocol'
import type { ResultOf } from '@dsh/host-api'
import type { Conn } from './connection.js'
import { Hosted, type Status } from './hosted.js'
import type { Archive } from './archive.js'

type Detail = ResultOf<'session/get'>['session']
type Config = Detail['config']

const DECISIONS: Record<string, ApprovalOutcome> = { 'allow-once': 'allow-once', 'allow-session': 'allow-always', 'reject': 'reject' }

/** How a session is taken onto the host. */
export interface AdoptOptions {
  agent: AgentOptions
  /** Whether the preset's tool filter applies (it does unless a per-session tool is asked for). */
  presetFilter?: ((name: string) => boolean) | undefined
}

/**
 * The host's state and the rules every method shares: the table of hosted sessions,
 * ownership, answerer routing (approvals go to the owner of the session or of its parent),
 * status notifications and session details. Methods live in `methods/`.
 */
export class HostCore {
  readonly hosted = new Map<string, Hosted>()
  readonly conns = new Set<Conn>()
  /** Opens in flight, by session id: a second opener waits for (and is refused by) the first. */
  readonly opening = new Map<string, { conn: Conn; done: Promise<unknown> }>()

  constructor(readonly ctx: Context, readonly archive: Archive, readonly version: string) {}

  get presets(): PresetService | undefined {
    return this.ctx.get('presets') as PresetService | undefined
  }

  /** The hosted session, SESSION_NOT_OPEN when stored but not open here, SESSION_NOT_FOUND otherwise. */
  async hostedOf(id: string): Promise<Hosted> {
    const hosted = this.hosted.get(id)
    if (hosted) return hosted
    await this.ctx.sessions.read(id)
    throw new DshError('SESSION_NOT_OPEN', `session ${id} is not open on this host`, { hint: 'open it first (session/open)' })
  }

  /** The hosted session owned by `conn` (NOT_OWNER otherwise). */
  async owned(conn: Conn, id: string): Promise<Hosted> {
    const hosted = await this.hostedOf(id)
    if (hosted.owner !== conn) {
      throw new DshError('NOT_OWNER', `session ${id} is owned by ${hosted.owner ? `"${hosted.owner.client.name}"` : 'nobody'}, not by this client`, {
        hint: 'open it on this connection after its owner closes it',
      })
    }
    return hosted
  }

  /** Takes an open session onto the host, owned and subscribed (`afterSeq`) by `conn`. */
  adopt(conn: Conn, session: Session, options: AdoptOptions, afterSeq: number): Hosted {
    const { presetFilter } = options
    // the filter runs at request time, after `hosted` exists: per-session tools pass the preset's filter
    const toolFilter = presetFilter ? (name: string) => hosted.ownTools.has(name) || presetFilter(name) : undefined
    const agent = this.ctx.agents.create(session, { ...options.agent, toolFilter })
    const hosted: Hosted = new Hosted(session, agent, (name) => this.ctx.tools.get(name, session.id), (h, status) => this.statusChanged(h, status))
    hosted.owner = conn
    this.hosted.set(session.id, hosted)
    const approvals = conn.capabilities.approvals
    hosted.disposers.push(this.ctx.approval.setSessionAnswerer(session.id, approvals ? (s, request, signal) => this.answerApproval(hosted, s, request, signal) : null))
    hosted.subscribe(conn, afterSeq)
    return hosted
  }

  /** After an await that may have outlived the caller: a hosted session of a closed connection is released (CONNECTION_CLOSED). */
  async stillConnected(conn: Conn, hosted: Hosted): Promise<Hosted> {
    if (!conn.closed) return hosted
    await this.release(hosted)
    throw new DshError('CONNECTION_CLOSED', `client "${conn.client.name}" went away while session ${hosted.id} was being opened; it was closed again`)
  }

  /** Cancels, withdraws requests, unregisters, closes (flush + unlock) and forgets a hosted session. */
  async release(hosted: Hosted): Promise<void> {
    if (this.hosted.get(hosted.id) !== hosted) return
    hosted.cancel()
    this.hosted.delete(hosted.id)
    await hosted.agent.idle().catch(() => undefined)
    this.ctx.agents.remove(hosted.id)
    hosted.detach()
    for (const dispose of hosted.disposers.splice(0).reverse()) {
      try {
        await dispose()
      } catch (error) {
        this.ctx.logger('host').warn('releasing session %s: %s', hosted.id, error)
      }
    }
    await hosted.session.close()
  }

  /** A session closed from elsewhere (its plugin unloaded): forget it without touching the log. */
  forget(session: Session): void {
    const hosted = this.hosted.get(session.id)
    if (!hosted || hosted.session !== session) return
    this.hosted.delete(session.id)
    hosted.cancel()
    hosted.detach()
    for (const dispose of hosted.disposers.splice(0)) void Promise.resolve().then(dispose).catch(() => undefined)
  }

  config(hosted: Hosted): Config {
    const model = hosted.agent.modelConfig()
    return {
      provider: model.provider, model: model.model, reasoningEffort: model.reasoningEffort ?? null,
      permissionMode: this.ctx.permission.current(hosted.session).id,
      agentPreset: this.presets?.current(hosted.session).id ?? null,
    }
  }

  detail(hosted: Hosted): Detail {
    const { session } = hosted
    const events = hosted.durableEvents()
    const parent = session.header.parent
    return {
      id: session.id, workspace: session.cwd, title: latestTitle(events) ?? null, created: session.header.created,
      updatedAt: events.at(-1)?.time ?? session.header.created, events: events.length, status: hosted.status,
      archived: this.archive.has(session.id), parent: parent ? { ...parent } : null, open: true,
      config: this.config(hosted), lastSeq: events.length - 1,
    }
  }

  /** Live output of a running call, to the session's subscribers (not an event: may be dropped, the result carries it). */
  output(sessionId: string, toolCallId: string, data: string): void {
    const hosted = this.hosted.get(sessionId)
    if (!hosted) return
    for (const conn of hosted.subscribers.keys()) conn.notify('session/output', { sessionId, toolCallId, data })
  }

  private statusChanged(hosted: Hosted, status: Status): void {
    const error = hosted.failure
    const params = { sessionId: hosted.id, status, ...(error ? { error: { code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) } } : {}) }
    for (const conn of hosted.subscribers.keys()) conn.notify('session/status', params)
  }

  /** The owner's answer to an approval (its session's, or a subagent's of it); a rejection or bad answer is `reject`. */
  private async answerApproval(hosted: Hosted, asking: Session, request: ApprovalRequest & { id: string }, signal: AbortSignal): Promise<ApprovalOutcome> {
    const toolCallId = ownerCallId(this.ctx, asking, hosted.id, request.callId)
    const params = {
      sessionId: hosted.id, requestId: request.id, toolCallId: toolCallId ?? null, tool: request.tool, title: request.title,
      kind: request.kind, rawInput: (request.rawInput ?? null) as Json, reason: request.reason ?? null,
      card: request.card ? { kind: 'tool-call' as const, callId: toolCallId ?? '', tool: request.tool, card: request.card } : null,
      options: [
        { decision: 'allow-once' as const, label: 'Allow once' },
        { decision: 'allow-session' as const, label: 'Allow for this session', ...(request.scope ? { scope: request.scope.label } : {}) },
        { decision: 'reject' as const, label: 'Reject' },
      ],
    }
    try {
      const answer = await hosted.ask('approval/request', params as never, signal) as { decision?: unknown }
      const outcome = typeof answer?.decision === 'string' ? DECISIONS[answer.decision] : undefined
      if (!outcome) throw new DshError('INVALID_ANSWER', `the answer to approval ${request.id} has no valid decision`)
      return outcome
    } catch (error) {
      // the turn's cancel, or the client's own cancel of this one question (the call is cancelled, the session goes on)
      if (signal.aborted || isDshError(error, 'CANCELLED')) return 'cancelled'
      throw error
    }
  }
}

/**
 * The call a question is shown on in the owner's session: a subagent's question (its session
 * a child of the owner's, through `task` calls) is attached to the owner-side `task` call
 * that started the chain, the call the owner's client knows.
 */
function ownerCallId(ctx: Context, asking: Session, ownerId: string, callId: string | undefined): string | undefined {
  let shown = callId
  let target: Session | undefined = asking
  for (let depth = 0; target && target.id !== ownerId && depth < 32; depth++) {
    const parent = target.header.parent
    if (!parent || parent.fork) break
    if (parent.callId) shown = parent.callId
    target = ctx.sessions.get(parent.id)
  }
  return shown
}
