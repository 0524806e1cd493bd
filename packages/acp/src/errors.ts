import { RequestError } from '@agentclientprotocol/sdk/unstable'
import type * as acp from '@agentclientprotocol/sdk/unstable'
import { isDshError } from '@dsh/protocol'
import { ForkError } from './fork.js'
import { PromptError } from './prompt.js'
import { quote } from './quote.js'

/**
 * Harness errors → JSON-RPC errors. Contract:
 * - invalid params (bad prompt content, fork reference, relative cwd, unknown mode or
 *   config value) → -32602 before anything runs;
 * - unknown session → -32002 naming it (`data.sessionId`);
 * - missing credential → -32000 (auth_required) with `data.authMethods`;
 * - a session another process writes, or another connection holds (the host's SESSION_BUSY)
 *   → -32603 `SESSION_LOCKED: …` (data.code, data.hint);
 * - anything else → -32603 `CODE: message`. Keys never appear (harness errors carry none).
 */
export function invalidParams(message: string): RequestError {
  return new RequestError(-32602, `Invalid params: ${message}`)
}

export function sessionNotFound(sessionId: string): RequestError {
  return new RequestError(-32002, `Resource not found: session ${sessionId.length <= 80 ? sessionId : quote(sessionId)}`, { sessionId })
}

export function authRequired(message: string, authMethods: readonly acp.AuthMethod[], provider?: string): RequestError {
  return new RequestError(-32000, `Authentication required: ${message}`, { authMethods, ...(provider ? { provider } : {}) })
}

export function toRequestError(error: unknown, context: { sessionId?: string; authMethods?: readonly acp.AuthMethod[] } = {}): RequestError {
  if (error instanceof RequestError) return error
  if (error instanceof PromptError || error instanceof ForkError) return invalidParams(error.message)
  if (isDshError(error)) {
    switch (error.code) {
      case 'SESSION_NOT_FOUND':
      case 'INVALID_SESSION_ID':
        return sessionNotFound(context.sessionId ?? String(error.data?.sessionId ?? ''))
      case 'NO_CREDENTIALS':
      case 'AUTH':
        return authRequired(error.message, context.authMethods ?? [])
      case 'UNKNOWN_PRESET':
      case 'INVALID_ARGUMENT':
      case 'INVALID_PARAMS':
      case 'WORKSPACE_INVALID':
      case 'PRESET_LOCKED':
      case 'PRESETS_UNAVAILABLE':
      case 'FORK_POINT_NOT_FOUND':
      case 'INVALID_CURSOR':
        return invalidParams(error.message)
      case 'SESSION_BUSY':
        // the host's word for a session another connection of this process holds: to the editor, it is locked
        return new RequestError(-32603, `SESSION_LOCKED: ${error.message}`, { code: 'SESSION_LOCKED', hint: 'close it there (session/close) first', ...(context.sessionId ? { sessionId: context.sessionId } : {}) })
    }
    return new RequestError(-32603, `${error.code}: ${error.message}`, { code: error.code, ...(error.hint ? { hint: error.hint } : {}), ...(context.sessionId ? { sessionId: context.sessionId } : {}) })
  }
  return new RequestError(-32603, `Internal error: ${error instanceof Error ? error.message : String(error)}`)
}
