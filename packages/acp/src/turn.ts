import * as acp from '@agentclientprotocol/sdk/unstable'
import { parseCommand, type TurnOutcome } from '@dsh/core'
import { authMethods, requireCredentials } from './auth.js'
import type { AcpConnection } from './connection.js'
import { authRequired } from './errors.js'
import { PromptError, toUserContent } from './prompt.js'
import { ensureSession, newSession, requireState } from './sessions.js'
import { newTurn, type TurnToken } from './queue.js'
import { turnOpen, type SessionState } from './state.js'
import type { SteeringParams } from './steering.js'

/**
 * Prompt turns. Rules:
 * - Content is validated before anything runs (-32602); a stored session that is not
 *   open here is opened silently (-32002 when there is none).
 * - One prompt at a time per session: a `session/prompt` that arrives while another one
 *   runs is queued; it starts its own turn once the running one has answered, and is
 *   answered when that turn ends. `session/cancel` answers every prompt that arrived
 *   before it with `cancelled` (the running one once its turn has stopped; queued ones
 *   without running).
 * - Updates of a turn are sent only while its token is open: a cancel closes it at once,
 *   so nothing is sent after the `cancelled` reply. Running tools are killed by the
 *   agent's abort before the reply.
 * - `/login` and `/logout` typed in chat get a reply pointing to the client's own login
 *   and never reach the model; other `/name` lines go to the command registry (when
 *   mounted) and run without a model turn unless the command starts one.
 */
export async function prompt(b: AcpConnection, p: acp.PromptRequest, requestId?: acp.JsonRpcId): Promise<acp.PromptResponse> {
  const epoch = requestId === undefined ? b.epochs.current(p.sessionId) : b.epochs.arrival(requestId, p.sessionId)
  const content = toUserContent(p.prompt)
  const state = await ensureSession(b, p.sessionId)
  if (content.some((part) => part.type === 'image')) {
    // refused before anything runs: a text-only model would fail the whole request
    const { provider, model } = state.agent.modelConfig()
    if (b.ctx.llm.modelInfo(provider, model).vision === false) {
      throw new PromptError(`the model ${provider}:${model} does not accept images; choose a model that does (config option "model") or send text`)
    }
  }
  state.quiet = false
  const only = p.prompt.length === 1 ? p.prompt[0] : undefined
  const line = only?.type === 'text' ? only.text : undefined
  const command = line === undefined ? undefined : parseCommand(line)
  if (command?.name === 'login' || command?.name === 'logout') {
    return queued(b, state, epoch, async (token) => {
      say(b, state, token, `\`/${command.name}\` isn't available in this environment: ${command.name === 'login'
        ? 'sign in with your editor\'s own login for this agent (API key, terminal or browser), or run `dsh-acp login` in a terminal.'
        : 'use your editor\'s own logout for this agent.'}`)
      return { stopReason: 'end_turn' }
    })
  }
  const commands = command ? b.ctx.get('commands') : undefined
  if (commands && line !== undefined) {
    return queued(b, state, epoch, async (token) => {
      const controller = new AbortController()
      token.abort = controller
      const result = await commands.execute(state.session, state.agent, line, controller.signal)
      let note = ''
      let newSessionId: string | undefined
      if (result.newSession) {
        // `/clear`: a new session in the same workspace and permission preset, open on this connection
        const fresh = await newSession(b, { cwd: state.session.cwd, mcpServers: [] }, b.ctx.permission.current(state.session).id)
        newSessionId = fresh.sessionId
        note = `\n\nNew session: ${fresh.sessionId} (open it in your editor to continue there; this session stays on disk).`
      }
      if (result.reply || note) say(b, state, token, `${result.reply ?? ''}${note}`)
      if (!result.turn) return { stopReason: token.cancelled ? 'cancelled' : 'end_turn', ...(newSessionId ? { _meta: { newSessionId } } : {}) }
      return finishTurn(b, state, token, await settle(state, result.turn))
    })
  }
  requireCredentials(b, state.agent.modelConfig().provider)
  return queued(b, state, epoch, async (token) => finishTurn(b, state, token, await settle(state, state.agent.followup(content))))
}

/**
 * Runs `run` once every earlier prompt of the session has answered, with a fresh turn
 * token, unless a cancel arrived after this prompt (or the session closed meanwhile).
 * A cancelled turn sends a final `failed` status for every call the client was shown
 * without one, before the reply (nothing follows the reply).
 */
async function queued(b: AcpConnection, state: SessionState, epoch: number, run: (token: TurnToken) => Promise<acp.PromptResponse>): Promise<acp.PromptResponse> {
  const release = await state.queue.acquire()
  try {
    if (b.epochs.current(state.id) !== epoch || b.sessions.get(state.id) !== state) return { stopReason: 'cancelled' }
    const token = newTurn()
    state.turn = token
    state.lastOutcome = undefined
    let response: acp.PromptResponse
    try {
      response = await run(token)
    } finally {
      if (state.turn === token) state.turn = undefined
      state.pendingOutput.clear()
      if (token.cancelled) for (const toolCallId of token.unfinished) b.send(state.id, { sessionUpdate: 'tool_call_update', toolCallId, status: 'failed' })
      token.unfinished.clear()
    }
    await b.flush()
    return response
  } finally {
    release()
  }
}

/** The outcome of the prompt's turn, after any turn a late steer started has ended too. */
async function settle(state: SessionState, turn: Promise<TurnOutcome>): Promise<TurnOutcome> {
  const first = await turn
  while (state.agent.busy) await state.agent.idle()
  return state.lastOutcome ?? first
}

function finishTurn(b: AcpConnection, state: SessionState, token: TurnToken, outcome: TurnOutcome): acp.PromptResponse {
  const u = token.usage
  const usage: acp.Usage | undefined = u.steps ? {
    totalTokens: u.input + u.output, inputTokens: u.input, outputTokens: u.output,
    ...(u.thought ? { thoughtTokens: u.thought } : {}), ...(u.cacheRead ? { cachedReadTokens: u.cacheRead } : {}), ...(u.cacheWrite ? { cachedWriteTokens: u.cacheWrite } : {}),
  } : undefined
  const answer = (stopReason: acp.StopReason): acp.PromptResponse => ({ stopReason, ...(usage ? { usage } : {}) })
  if (token.cancelled) return answer('cancelled')
  switch (outcome.reason) {
    case 'completed': return answer('end_turn')
    case 'max-tokens': return answer('max_tokens')
    case 'max-steps': return answer('max_turn_requests')
    case 'rejected': return answer('refusal')
    case 'aborted':
    case 'interrupted': return answer('cancelled')
    case 'error': {
      const error = outcome.error ?? { code: 'ERROR', message: 'the turn failed' }
      if (error.code === 'AUTH' || error.code === 'NO_CREDENTIALS') throw authRequired(error.message, authMethods(b), state.agent.modelConfig().provider)
      throw new acp.RequestError(-32603, `${error.code}: ${error.message}`, { code: error.code, sessionId: state.id })
    }
  }
}

/** A reply of the agent's own (no model turn), when the turn is still open. */
function say(b: AcpConnection, state: SessionState, token: TurnToken, text: string): void {
  if (state.turn === token && !token.cancelled) b.send(state.id, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } })
}

/**
 * `session/cancel`, applied when the frame is read (in arrival order, before any later
 * frame's handler can run; the epoch was counted by `CancelEpochs.observe`). Closes the
 * running turn's gate at once and aborts the turn (request and running tools) or
 * command; every prompt that arrived before it answers `cancelled`. Session-level
 * updates stay held back until the client's next request on the session.
 */
export function cancel(b: AcpConnection, sessionId: string): void {
  const state = b.sessions.get(sessionId)
  if (!state) return
  state.quiet = true
  if (state.turn) {
    state.turn.cancelled = true
    state.turn.abort?.abort()
  }
  state.pendingOutput.clear()
  state.agent.cancel()
}

/** `_session/steering`: into the running turn (`injected`), else `promptRequired`. */
export function steer(b: AcpConnection, p: SteeringParams): { outcome: 'injected' } | { outcome: 'promptRequired'; reason: 'noRunningTurn' } {
  const state = requireState(b, p.sessionId)
  const content = toUserContent(p.prompt)
  if (turnOpen(state) && state.agent.busy) {
    state.agent.steer(content)
    return { outcome: 'injected' }
  }
  return { outcome: 'promptRequired', reason: 'noRunningTurn' }
}
