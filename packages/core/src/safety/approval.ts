import { Service, type Context } from '@deepseek-ai/cordis'
import type { ApprovalOutcome, ApprovalRequest, Json } from '@dsh/protocol'
import type { Session } from '../session/session.js'

declare module '@dsh/protocol' {
  interface SessionEventMap {
    'approval/request': { id: string; request: Json }
    'approval/decision': { id: string; outcome: ApprovalOutcome; reason?: string; scope?: string; remembered?: boolean }
  }
}
declare module '@deepseek-ai/cordis' {
  interface Context { approval: ApprovalService }
}

/** Supplied by a surface (web dialog, ACP `session/request_permission`). */
export type Answerer = (session: Session, request: ApprovalRequest & { id: string }, signal: AbortSignal) => Promise<ApprovalOutcome>

/**
 * `ctx.approval`: puts questions to the session's answerer and logs question and decision.
 * Answerers are registered per session (the host routes each to the session's owner); a
 * session without one asks its parent's (a subagent's questions go to the surface that
 * owns the parent), then the process-wide fallback (`setAnswerer`). allow-always is
 * remembered per session and scope key — as a logged decision, so it survives resume.
 * With no answerer (headless) every question is answered `reject`.
 */
export class ApprovalService extends Service {
  // containers only (cordis hands callers a derived object): never reassigned
  private readonly fallback: { answerer?: Answerer | undefined } = {}
  /** null: this session (and its subagents) has an owner that cannot answer: reject, never the fallback. */
  private readonly perSession = new Map<string, Answerer | null>()
  private readonly counter = { n: 0 }
  /** Per session: the allow-always scope keys logged in events [0, scanned) (a log only grows). */
  private readonly always = new WeakMap<Session, { scanned: number; scopes: Set<string> }>()

  constructor(ctx: Context) {
    super(ctx, 'approval')
  }

  /** The process-wide answerer, used for sessions that have none of their own (or through a parent). */
  setAnswerer(answerer: Answerer): () => void {
    this.fallback.answerer = answerer
    return () => {
      if (this.fallback.answerer === answerer) this.fallback.answerer = undefined
    }
  }

  /**
   * The answerer of one session (and of its subagents); replaces an earlier one. `null`
   * says nobody answers there (every question is rejected with the headless reason).
   * Returns the unregister.
   */
  setSessionAnswerer(sessionId: string, answerer: Answerer | null): () => void {
    this.perSession.set(sessionId, answerer)
    return () => {
      if (this.perSession.get(sessionId) === answerer) this.perSession.delete(sessionId)
    }
  }

  /** Whether a process-wide answerer exists (sessions may still have their own: see `canAskFor`). */
  get canAsk(): boolean {
    return !!this.fallback.answerer
  }

  /** Whether someone can answer this session's questions. */
  canAskFor(session: Session): boolean {
    return !!this.answererFor(session)
  }

  /** The session's own answerer, else its parent's (subagents, not forks), else the fallback. */
  private answererFor(session: Session): Answerer | undefined {
    const sessions = this.ctx.get('sessions') as { get(id: string): Session | undefined } | undefined
    let id: string | undefined = session.id
    let parent = session.header.parent
    for (let depth = 0; id !== undefined && depth < 32; depth++) {
      const own = this.perSession.get(id)
      if (own !== undefined) return own ?? undefined
      if (!parent || parent.fork) break
      id = parent.id
      parent = sessions?.get(id)?.header.parent
    }
    return this.fallback.answerer
  }

  /**
   * Whether an allow-always decision logged in this session covers the scope key. Reads
   * only the events appended since the previous question (each question costs O(new events)).
   */
  remembered(session: Session, key: string): boolean {
    let seen = this.always.get(session)
    if (!seen) this.always.set(session, seen = { scanned: 0, scopes: new Set() })
    const { events } = session
    for (let i = seen.scanned; i < events.length; i++) {
      const event = events[i]!
      if (event.type !== 'approval/decision') continue
      const data = event.data as { outcome: ApprovalOutcome; scope?: string }
      if (data.outcome === 'allow-always' && typeof data.scope === 'string') seen.scopes.add(data.scope)
    }
    seen.scanned = events.length
    return seen.scopes.has(key)
  }

  async request(session: Session, request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalOutcome> {
    const id = `ap-${Date.now().toString(36)}-${++this.counter.n}`
    const answerer = this.answererFor(session)
    const scope = request.scope?.key
    if (scope && this.remembered(session, scope)) {
      session.append('approval/decision', { id, outcome: 'allow-once', scope, remembered: true, reason: 'allowed always earlier in this session' })
      return 'allow-once'
    }
    session.append('approval/request', { id, request: request as unknown as Json })
    let outcome: ApprovalOutcome
    let reason: string | undefined
    if (!answerer) {
      outcome = 'reject'
      reason = 'no one can answer approval requests on this surface (headless runs deny what needs approval)'
    } else if (signal.aborted) {
      outcome = 'cancelled'
    } else {
      try {
        outcome = await answerer(session, { ...request, id }, signal)
      } catch (error) {
        outcome = signal.aborted ? 'cancelled' : 'reject'
        reason = error instanceof Error ? error.message : String(error)
      }
    }
    session.append('approval/decision', { id, outcome, ...(reason ? { reason } : {}), ...(scope ? { scope } : {}) })
    return outcome
  }
}
