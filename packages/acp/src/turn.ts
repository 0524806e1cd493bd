import * as acp from '@agentclientprotocol/sdk/unstable'
import { parseCommand } from '@dsh/core'
import { isDshError } from '@dsh/protocol'
import { authMethods, requireCredentials } from './auth.js'
import type { AcpConnection } from './connection.js'
import { authRequired } from './errors.js'
import { PromptError, toUserContent } from './prompt.js'
import { adoptOpen, ensureSession, requireState } from './sessions.js'
import { newTurn, type TurnToken } from './queue.js'
import { turnOpen, type SessionState } from './state.js'
import type { SteeringParams } from './steering.js'

/**
 * Prompt turns, on the host (`session/prompt`, `session/command`, `session/cancel`). Rules:
 * - Content is validated before anything runs (-32602); a stored session that is not
 *   open here is opened silently (-32002 when there is none).
 * - One prompt reply at a time per session: a `session/prompt` that arrives while another
 *   one runs waits; it is sent to the host once the running one has answered, and is
 *   answered when its turn ends (its `turn/end`, the host's status back to idle).
 *   `session/cancel` answers every prompt that arrived before it with `cancelled` (the
 *   running one once its turn has stopped; waiting ones without running).
 * - Updates of a turn are sent only while its token is open: a cancel closes it at once,
 *   so nothing is sent after the `cancelled` reply. The host's cancel kills running tools
 *   before the turn ends.
 * - `/login` and `/logout` typed in chat get a reply pointing to the client's own login
 *   and never reach the model; other `/name` lines are the host's `session/command`.
 */
export async function prompt(b: AcpConnection, p: acp.PromptRequest, requestId?: acp.JsonRpcId): Promise<acp.PromptResponse> {
  const epoch = requestId === undefined ? b.epochs.current(p.sessionId) : b.epochs.arrival(requestId, p.sessionId)
  const content = toUserContent(p.prompt)
  const state = await ensureSession(b, p.sessionId)
  if (content.some((part) => part.type === 'image')) {
    // refused before anything runs: a text-only model would fail the whole request
    const { provider, model } = state.config
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
  if (command && line !== undefined && b.ctx.get('commands')) {
    return queued(b, state, epoch, async (token) => {
      let result
      try {
        result = await b.host.call('session/command', { sessionId: state.id, line })
      } catch (error) {
        if (!isDshError(error, 'UNKNOWN_COMMAND')) throw error
        say(b, state, token, error.message)
        return { stopReason: 'end_turn' }
      }
      let note = ''
      if (result.newSessionId) {
        // `/clear`: the host opened a new session in the same workspace and preset, owned here
        await adoptOpen(b, result.newSessionId)
        note = `\n\nNew session: ${result.newSessionId} (open it in your editor to continue there; this session stays on disk).`
      }
      if (result.reply || note) say(b, state, token, `${result.reply ?? ''}${note}`)
      if (!result.startedTurn) return { stopReason: token.cancelled ? 'cancelled' : 'end_turn', ...(result.newSessionId ? { _meta: { newSessionId: result.newSessionId } } : {}) }
      await settled(state, token)
      return finishTurn(b, state, token)
    })
  }
  requireCredentials(b, state.config.provider)
  return queued(b, state, epoch, async (token) => {
    await b.host.call('session/prompt', { sessionId: state.id, prompt: content })
    await settled(state, token)
    return finishTurn(b, state, token)
  })
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

/**
 * Resolves once the work the token stands for has stopped: its turn ended (`turn/end`,
 * and any turn a late steer started too: the host's status is idle again), or a cancel
 * closed the token and the host is idle, or the session was closed or can no longer be written.
 */
function settled(state: SessionState, token: TurnToken): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      const idle = state.status === 'idle'
      if (!state.closed && !state.failure && !(idle && (token.end || token.cancelled))) return
      state.changed = () => undefined
      resolve()
    }
    state.changed = check
    check()
  })
}

function finishTurn(b: AcpConnection, state: SessionState, token: TurnToken): acp.PromptResponse {
  const u = token.usage
  const usage: acp.Usage | undefined = u.steps ? {
    totalTokens: u.input + u.output, inputTokens: u.input, outputTokens: u.output,
    ...(u.thought ? { thoughtTokens: u.thought } : {}), ...(u.cacheRead ? { cachedReadTokens: u.cacheRead } : {}), ...(u.cacheWrite ? { cachedWriteTokens: u.cacheWrite } : {}),
  } : undefined
  const answer = (stopReason: acp.StopReason): acp.PromptResponse => ({ stopReason, ...(usage ? { usage } : {}) })
  if (token.cancelled || state.closed) return answer('cancelled')
  const failed = (code: string, message: string) => new acp.RequestError(-32603, `${code}: ${message}`, { code, sessionId: state.id })
  if (!token.end) {
    const error = state.failure ?? { code: 'TURN_LOST', message: 'the turn ended without a recorded end' }
    throw failed(error.code, error.message)
  }
  switch (token.end.reason) {
    case 'completed': return answer('end_turn')
    case 'max-tokens': return answer('max_tokens')
    case 'max-steps': return answer('max_turn_requests')
    case 'rejected': return answer('refusal')
    case 'aborted':
    case 'interrupted': return answer('cancelled')
    case 'error': {
      const error = token.end.error ?? { code: 'ERROR', message: 'the turn failed' }
      if (error.code === 'AUTH' || error.code === 'NO_CREDENTIALS') throw authRequired(error.message, authMethods(b), state.config.provider)
      throw failed(error.code, error.message)
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
 * running turn's gate at once and calls the host's `session/cancel` (the turn is aborted,
 * its tools killed, what the host queued before dropped); every prompt that arrived
 * before it answers `cancelled`. A prompt read after it calls the host after it, so the
 * host's own order keeps it. Session-level updates stay held back until the client's
 * next request on the session.
 */
export function cancel(b: AcpConnection, sessionId: string): void {
  const state = b.sessions.get(sessionId)
  if (!state) return
  state.quiet = true
  if (state.turn) state.turn.cancelled = true
  state.pendingOutput.clear()
  b.host.call('session/cancel', { sessionId }).then(() => state.changed(), (error: unknown) => {
    b.debug(`session/cancel failed: ${error instanceof Error ? error.message : String(error)}`)
    state.changed()
  })
}

/** `_session/steering`: the host's `session/prompt {mode: steer}` into the running turn (`injected`), else `promptRequired`. */
export async function steer(b: AcpConnection, p: SteeringParams): Promise<{ outcome: 'injected' } | { outcome: 'promptRequired'; reason: 'noRunningTurn' }> {
  const state = requireState(b, p.sessionId)
  const content = toUserContent(p.prompt)
  const required = { outcome: 'promptRequired' as const, reason: 'noRunningTurn' as const }
  if (!turnOpen(state)) return required
  try {
    await b.host.call('session/prompt', { sessionId: state.id, prompt: content, mode: 'steer' })
  } catch (error) {
    if (isDshError(error, 'STEER_NO_TURN')) return required
    throw error
  }
  return { outcome: 'injected' }
}
