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
 * `ctx.approval`: puts questions to the surface's answerer and logs question and decision.
 * allow-always is remembered per session and scope key — as a logged decision, so it
 * survives resume. With no answerer (headless) every question is answered `reject`.
 */
export class ApprovalService extends Service {
  private answerer: Answerer | undefined
  private counter = 0

  constructor(ctx: Context) {
    super(ctx, 'approval')
  }

  setAnswerer(answerer: Answerer): () => void {
    this.answerer = answerer
    return () => {
      if (this.answerer === answerer) this.answerer = undefined
    }
  }

  get canAsk(): boolean {
    return !!this.answerer
  }

  /** Whether an allow-always decision in this session covers the scope key. */
  remembered(session: Session, key: string): boolean {
    for (const event of session.events) {
      if (event.type !== 'approval/decision') continue
      const data = event.data as { outcome: ApprovalOutcome; scope?: string }
      if (data.outcome === 'allow-always' && data.scope === key) return true
    }
    return false
  }

  async request(session: Session, request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalOutcome> {
    const id = `ap-${Date.now().toString(36)}-${++this.counter}`
    const scope = request.scope?.key
    if (scope && this.remembered(session, scope)) {
      session.append('approval/decision', { id, outcome: 'allow-once', scope, remembered: true, reason: 'allowed always earlier in this session' })
      return 'allow-once'
    }
    session.append('approval/request', { id, request: request as unknown as Json })
    let outcome: ApprovalOutcome
    let reason: string | undefined
    if (!this.answerer) {
      outcome = 'reject'
      reason = 'no one can answer approval requests on this surface (headless runs deny what needs approval)'
    } else if (signal.aborted) {
      outcome = 'cancelled'
    } else {
      try {
        outcome = await this.answerer(session, { ...request, id }, signal)
      } catch (error) {
        outcome = signal.aborted ? 'cancelled' : 'reject'
        reason = error instanceof Error ? error.message : String(error)
      }
    }
    session.append('approval/decision', { id, outcome, ...(reason ? { reason } : {}), ...(scope ? { scope } : {}) })
    return outcome
  }
}
