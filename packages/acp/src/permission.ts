import type * as acp from '@agentclientprotocol/sdk/unstable'
import type { ApprovalOutcome, ApprovalRequest, CallCard, Json } from '@dsh/protocol'
import type { AcpConnection } from './connection.js'
import { turnOpen, type SessionState } from './state.js'
import { callToWire, textBlock } from './wire.js'

/** Option ids of `session/request_permission` and the approval outcome each stands for. */
export const PERMISSION_OPTIONS = { 'allow-once': 'allow-once', 'allow-always': 'allow-always', reject: 'reject' } as const

/**
 * The permission request for an approval question, pure: the tool call as it will run
 * (title, kind, `rawInput`, the diff of an edit or the description of a command, the
 * reason it is asked), with allow-once, allow-always (labelled with the scope it covers,
 * when the question has one) and reject.
 */
export function permissionRequest(sessionId: string, request: ApprovalRequest & { id: string }, callCard: CallCard | undefined, cwd: string): acp.RequestPermissionRequest {
  const toolCallId = request.callId ?? request.id
  // the question's own card (e.g. an escalation), else the card of the call it is about
  const shown: CallCard = request.card ?? callCard ?? { card: 'generic', title: request.title }
  // A permission dialog shows the call as text: never a display terminal (it has no output yet).
  const wire = callToWire(toolCallId, shown, request.rawInput ?? null, { cwd, terminalOutput: false })
  const content = [...(wire.content ?? [])]
  if (request.reason) content.push(textBlock(`${request.kind === 'escalation' ? 'Needs to run outside the sandbox' : 'Asks for approval'}: ${request.reason}`))
  const options: acp.PermissionOption[] = [{ optionId: PERMISSION_OPTIONS['allow-once'], name: 'Allow once', kind: 'allow_once' }]
  if (request.scope) options.push({ optionId: PERMISSION_OPTIONS['allow-always'], name: `Always allow: ${request.scope.label}`, kind: 'allow_always' })
  options.push({ optionId: PERMISSION_OPTIONS.reject, name: 'Reject', kind: 'reject_once' })
  return {
    sessionId,
    toolCall: {
      toolCallId, title: request.kind === 'escalation' ? request.title : wire.title ?? request.title, kind: wire.kind ?? 'other', status: 'pending',
      content, locations: wire.locations ?? [], rawInput: (request.rawInput ?? null) as Json,
    },
    options,
  }
}

/** The approval outcome of the client's answer. */
export function outcomeOf(response: acp.RequestPermissionResponse): ApprovalOutcome {
  if (response.outcome.outcome === 'cancelled') return 'cancelled'
  switch (response.outcome.optionId) {
    case PERMISSION_OPTIONS['allow-once']: return 'allow-once'
    case PERMISSION_OPTIONS['allow-always']: return 'allow-always'
    default: return 'reject'
  }
}

/**
 * Asks the client. The turn's cancel aborts `signal`: the request is cancelled on the wire
 * and the answer is `cancelled` (the call is cancelled, the session goes on). A client
 * answering `cancelled` by itself cancels that call only. The dialog follows every update
 * queued before it; a call already shown `in_progress` (a tool body asking, e.g. an
 * escalation) is shown `pending` while the dialog is open and `in_progress` again once allowed.
 */
export async function askPermission(b: AcpConnection, state: SessionState, request: ApprovalRequest & { id: string }, signal: AbortSignal): Promise<ApprovalOutcome> {
  if (signal.aborted) return 'cancelled'
  const callCard = request.callId ? state.live.callCard(request.callId) : undefined
  const params = permissionRequest(state.id, request, callCard, state.session.cwd)
  const { toolCallId } = params.toolCall
  const token = state.turn
  const running = !!token && turnOpen(state) && token.started.has(toolCallId)
  if (running) b.send(state.id, { sessionUpdate: 'tool_call_update', toolCallId, status: 'pending' })
  await b.flush()
  b.debug(`-> session/request_permission ${state.id} ${toolCallId}`)
  let outcome: ApprovalOutcome
  try {
    const response = await b.client.request('session/request_permission', params, { cancellationSignal: signal, stopWaitingOnCancel: true })
    outcome = signal.aborted ? 'cancelled' : outcomeOf(response)
  } catch (error) {
    if (signal.aborted) return 'cancelled'
    throw error
  }
  if (running && state.turn === token && turnOpen(state) && (outcome === 'allow-once' || outcome === 'allow-always')) {
    b.send(state.id, { sessionUpdate: 'tool_call_update', toolCallId, status: 'in_progress' })
  }
  return outcome
}
