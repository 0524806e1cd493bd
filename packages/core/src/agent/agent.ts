import type { Context } from '@deepseek-ai/cordis'
import {
  errorInfo, failpoint, textOf, type AssistantBlock, type ErrorInfo, type LlmFailure, type ModelConfig,
  type ProviderEndpoint, type ToolCallBlock, type TurnEndReason, type Usage, type UserContent,
} from '@dsh/protocol'
import type { Session } from '../session/session.js'
import { runToolCalls } from '../tools/pipeline.js'
import type { ToolProgress } from '../tools/define.js'
import { jsonEqual } from './json-equal.js'
import { consumeStream, type StreamOutcome } from './stream.js'
import type { AgentOptions, QueuedMessage, RetryDecision, StepRequest, TurnOutcome } from './types.js'

type StepResult =
  | { kind: 'ok'; toolCalls: number; finish: StreamOutcome['finish']; usage?: Usage }
  | { kind: 'aborted'; usage?: Usage }
  | { kind: 'error'; error: ErrorInfo }

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}

/**
 * One agent over one session. An inbox with two queues — next-turn (`followup`) and
 * next-step (`steer` wakes, `inject` does not) — drained by a single driver. A turn is
 * steps; a step is one model request (with in-step retries) plus the tools it asked for;
 * the turn continues while tools owed results or next-step input exists. Every fact goes
 * to the session log first; requests are derived from the log only.
 */
export class Agent {
  private readonly nextTurn: { message: QueuedMessage; settle?: (o: TurnOutcome) => void }[] = []
  private readonly nextStep: QueuedMessage[] = []
  private driver: Promise<void> | undefined
  private controller: AbortController | undefined
  private turnCount: number
  private callIds: Set<string> | undefined
  options: AgentOptions

  constructor(readonly ctx: Context, readonly session: Session, options: AgentOptions = {}) {
    this.options = { ...options }
    this.turnCount = session.events.reduce((n, e) => (e.type === 'turn/start' ? n + 1 : n), 0)
  }

  /** The running turn's abort signal (undefined when idle). */
  get signal(): AbortSignal | undefined {
    return this.controller?.signal
  }

  get busy(): boolean {
    return !!this.driver
  }

  /**
   * Queues a message for the next turn and wakes the driver; resolves when that turn ends.
   * `id` becomes the id of the logged `user/message` (and is listed in `turn/start.prompts`).
   */
  followup(content: UserContent[] | string, via: QueuedMessage['via'] = 'prompt', id?: string): Promise<TurnOutcome> {
    return new Promise((resolve) => {
      this.nextTurn.push({ message: { content: toContent(content), via, ...(id ? { id } : {}) }, settle: resolve })
      this.wake()
    })
  }

  /** Queues for the next step of the running turn (or a new turn when idle) and wakes. */
  steer(content: UserContent[] | string, id?: string): void {
    this.nextStep.push({ content: toContent(content), via: 'steer', ...(id ? { id } : {}) })
    this.wake()
  }

  /** Queues for the next step without waking. */
  inject(content: UserContent[] | string): void {
    this.nextStep.push({ content: toContent(content), via: 'inject' })
  }

  /** Aborts the running request and tools; the turn ends `aborted`, the agent stays usable. */
  cancel(): void {
    this.controller?.abort()
  }

  /** Resolves when the driver has nothing left to do. */
  async idle(): Promise<void> {
    while (this.driver) await this.driver
  }

  /** Switches provider/model (and optionally effort) for the next request; logged as `model/select`. */
  setModel(selection: { provider?: string; model: string; reasoningEffort?: ModelConfig['reasoningEffort'] }): ModelConfig {
    const provider = selection.provider ?? this.modelConfig().provider
    this.ctx.llm.provider(provider)
    this.options = { ...this.options, provider, model: selection.model, ...(selection.reasoningEffort ? { reasoningEffort: selection.reasoningEffort } : {}) }
    const config = this.modelConfig()
    this.session.append('model/select', { provider: config.provider, model: config.model, ...(config.reasoningEffort ? { reasoningEffort: config.reasoningEffort } : {}) })
    return config
  }

  /** The model config this agent sends now: options, else the last logged selection or header, else defaults. */
  modelConfig(): ModelConfig {
    const select = this.session.last('model/select')
    const header = this.session.last('request/header')
    const logged = (select && (!header || select.seq > header.seq) ? select.data : header?.data.config) as ModelConfig | undefined
    const { provider, model } = this.ctx.llm.defaults({
      provider: this.options.provider ?? logged?.provider,
      model: this.options.model ?? (this.options.provider && this.options.provider !== logged?.provider ? undefined : logged?.model),
    })
    const maxTokens = this.options.maxTokens ?? logged?.maxTokens
    const effort = this.options.reasoningEffort ?? logged?.reasoningEffort
    return { provider, model, ...(maxTokens ? { maxTokens } : {}), ...(effort ? { reasoningEffort: effort } : {}) }
  }

  private wake(): void {
    if (this.driver) return
    this.driver = this.drive().finally(() => {
      this.driver = undefined
      if (this.nextTurn.length || this.nextStep.some((m) => m.via === 'steer')) this.wake()
    })
  }

  private async drive(): Promise<void> {
    while (this.nextTurn.length || this.nextStep.some((m) => m.via === 'steer')) {
      const claimed = this.nextTurn.splice(0)
      const messages = [...claimed.map((c) => c.message), ...this.nextStep.splice(0)]
      let outcome: TurnOutcome
      try {
        outcome = await this.runTurn(messages)
      } catch (error) {
        outcome = { turn: this.turnCount, reason: 'error', error: errorInfo(error), text: '' }
      }
      for (const c of claimed) c.settle?.(outcome)
      this.ctx.emit('agent/turn-end', this, outcome)
    }
  }

  private async admit(messages: QueuedMessage[]): Promise<boolean> {
    const admitted = await this.ctx.waterfall('agent/pre-step', this, messages, async () => messages)
    if (!admitted) return false
    for (const m of admitted) {
      this.session.append('user/message', { id: m.id ?? `u-${this.session.events.length}`, content: m.content, ...(m.via ? { via: m.via } : {}) })
    }
    return true
  }

  private async runTurn(messages: QueuedMessage[]): Promise<TurnOutcome> {
    const turn = ++this.turnCount
    const controller = this.controller = new AbortController()
    const { session } = this
    const prompts = messages.flatMap((m) => (m.id ? [m.id] : []))
    const started = session.append('turn/start', { turn, ...(prompts.length ? { prompts } : {}) }).seq
    let reason: TurnEndReason = 'completed'
    let error: ErrorInfo | undefined
    let openStep: number | undefined
    try {
      if (!(await this.admit(messages))) {
        reason = 'rejected'
      } else {
        const maxSteps = this.options.maxSteps ?? 200
        for (let step = 1; ; step++) {
          if (step > maxSteps) {
            reason = 'max-steps'
            break
          }
          session.append('step/start', { turn, step })
          failpoint('agent.step.started')
          openStep = step
          const steered = step > 1 ? this.nextStep.splice(0) : []
          if (steered.length && !(await this.admit(steered))) {
            session.append('step/end', { turn, step })
            openStep = undefined
            reason = 'rejected'
            break
          }
          const result = await this.runStep(turn, step, controller.signal)
          session.append('step/end', { turn, step, ...(result.kind !== 'error' && result.usage ? { usage: result.usage } : {}) })
          failpoint('agent.step.ended')
          openStep = undefined
          await session.flush()
          failpoint('agent.step.flushed')
          if (result.kind === 'error') {
            reason = 'error'
            error = result.error
            break
          }
          if (result.kind === 'aborted' || controller.signal.aborted) {
            reason = 'aborted'
            break
          }
          if (result.toolCalls > 0 || this.nextStep.length) continue
          if (await this.ctx.serial('agent/turn-stopping', this, turn)) continue
          if (result.finish === 'max-tokens') reason = 'max-tokens'
          break
        }
      }
    } catch (thrown) {
      reason = controller.signal.aborted ? 'aborted' : 'error'
      if (reason === 'error') error = errorInfo(thrown)
      // a listener that threw mid-step leaves no step open in the log
      if (openStep !== undefined) session.append('step/end', { turn, step: openStep })
    } finally {
      if (this.controller === controller) this.controller = undefined
    }
    session.append('turn/end', { turn, reason, ...(error ? { error } : {}) })
    await session.flush()
    return { turn, reason, ...(error ? { error } : {}), text: this.lastAssistantText(started) }
  }

  /** The text of this turn's last assistant message ('' when the turn produced none). */
  private lastAssistantText(turnStart: number): string {
    const event = this.session.last('assistant/message')
    return event && event.seq > turnStart ? textOf(event.data.content as AssistantBlock[]) : ''
  }

  /** The request for this step, derived from the log; a changed header is logged first. */
  private async buildRequest(): Promise<StepRequest> {
    const { ctx, session } = this
    const filter = this.options.toolFilter
    const tools = ctx.tools.schemas(filter, session.id)
    const config = this.modelConfig()
    const system = ctx.prompt.build({ sessionId: session.id, cwd: session.cwd, tools: tools.map((t) => t.name) })
    const base: StepRequest = { config, system, tools, messages: session.deriveMessages() }
    const request = await ctx.waterfall('agent/request', this, base, async () => base)
    const header = { system: request.system, tools: request.tools, config: request.config }
    const last = session.last('request/header')?.data
    if (!last || !jsonEqual(last, header)) session.append('request/header', header)
    return request
  }

  private async runStep(turn: number, step: number, signal: AbortSignal): Promise<StepResult> {
    const { ctx, session } = this
    const messageId = `${turn}:${step}`
    let request: StepRequest
    let endpoint: ProviderEndpoint
    try {
      request = await this.buildRequest()
      endpoint = ctx.llm.resolve(request.config.provider)
    } catch (error) {
      return { kind: 'error', error: errorInfo(error) }
    }
    let outcome: StreamOutcome
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1) {
        // a retry is derived from the log again: a listener may have changed history (compaction)
        try {
          request = await this.buildRequest()
        } catch (error) {
          return { kind: 'error', error: errorInfo(error) }
        }
      }
      failpoint('agent.request.sent')
      outcome = await consumeStream(ctx.llm.stream({ ...request, signal }, endpoint), (kind, delta) => {
        session.append('assistant/chunk', { messageId, kind, delta }, { ignorable: true })
      })
      if (outcome.finish !== 'error' || signal.aborted) break
      const failure: LlmFailure = outcome.error ?? { code: 'SERVER', message: 'unknown failure', retryable: false }
      const decision = await ctx.waterfall('agent/request-error', this, failure, attempt, async (): Promise<RetryDecision> => ({ retry: false }))
      if (!decision.retry) return { kind: 'error', error: { code: failure.code, message: failure.message } }
      session.append('llm/retry', { attempt, code: failure.code, message: failure.message, delayMs: decision.delayMs })
      await sleep(decision.delayMs, signal)
      if (signal.aborted) break
    }
    if (signal.aborted || outcome.finish === 'aborted') {
      const kept = outcome.blocks.filter((b) => b.type !== 'tool-call')
      if (kept.length) session.append('assistant/message', { id: messageId, content: kept, finish: 'aborted', interrupted: true })
      return { kind: 'aborted', ...(outcome.usage ? { usage: outcome.usage } : {}) }
    }
    const content = this.uniqueCallIds(outcome.blocks, messageId)
    session.append('assistant/message', {
      id: messageId, content, finish: outcome.finish, ...(outcome.usage ? { usage: outcome.usage } : {}),
    })
    failpoint('agent.message.logged')
    const calls = content.filter((b): b is ToolCallBlock => b.type === 'tool-call')
    if (calls.length) await this.runTools(calls, signal)
    return { kind: 'ok', toolCalls: calls.length, finish: outcome.finish, ...(outcome.usage ? { usage: outcome.usage } : {}) }
  }

  /**
   * Call ids are unique within a session (a tool result, a UI card and a terminal name one
   * call): an id the provider repeats from an earlier message is suffixed before it is
   * logged. History then carries the suffixed id in both the call and its result.
   */
  private uniqueCallIds(blocks: AssistantBlock[], messageId: string): AssistantBlock[] {
    if (!this.callIds) {
      this.callIds = new Set()
      for (const event of this.session.events) if (event.type === 'tool/call') this.callIds.add((event.data as { callId: string }).callId)
    }
    const seen = this.callIds
    return blocks.map((block) => {
      if (block.type !== 'tool-call') return block
      let id = block.id
      if (seen.has(id)) id = `${block.id}_${messageId.replace(':', '_')}`
      for (let n = 2; seen.has(id); n++) id = `${block.id}_${messageId.replace(':', '_')}_${n}`
      seen.add(id)
      return id === block.id ? block : { ...block, id }
    })
  }

  private async runTools(calls: ToolCallBlock[], signal: AbortSignal): Promise<void> {
    const { ctx, session } = this
    const preset = ctx.permission.current(session)
    await runToolCalls({
      ctx, session, signal,
      lookup: (name) => (this.options.toolFilter && !this.options.toolFilter(name) ? undefined : ctx.tools.get(name, session.id)),
      ownerOf: (name) => ctx.tools.owner(name, session.id),
      guards: ctx.tools.guards,
      cwd: session.cwd,
      policy: ctx.permission.policy(session),
      approval: preset.approval,
      canAsk: ctx.approval.canAskFor(session),
      requestApproval: (request, sig) => ctx.approval.request(session, request, sig),
      onProgress: (callId: string, update: ToolProgress) => ctx.emit('agent/tool-progress', this, callId, update),
    }, calls)
  }
}

declare module '@deepseek-ai/cordis' {
  interface Events {
    /** Live output of a running call (not logged). */
    'agent/tool-progress'(agent: Agent, callId: string, update: ToolProgress): void
  }
}

function toContent(content: UserContent[] | string): UserContent[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content
}
