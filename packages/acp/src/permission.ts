import type * as acp from '@agentclientprotocol/sdk/unstable'
import type { ClientRequestParams } from '@dsh/host'
import { DshError, type ApprovalOutcome, type ApprovalRequest, type CallCard, type Json } from '@dsh/protocol'
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

type ApprovalParams = ClientRequestParams<'approval/request'>
type QuestionParams = ClientRequestParams<'question/request'>

/** The host's `approval/request` as the harness question it stands for (for `permissionRequest`). */
export function approvalOf(params: ApprovalParams): ApprovalRequest & { id: string } {
  const scope = params.options.find((o) => o.decision === 'allow-session')?.scope
  return {
    id: params.requestId, kind: params.kind, tool: params.tool, title: params.title, rawInput: (params.rawInput ?? null) as Json,
    ...(params.toolCallId ? { callId: params.toolCallId } : {}), ...(params.reason ? { reason: params.reason } : {}),
    ...(params.card ? { card: params.card.card as CallCard } : {}), ...(scope ? { scope: { key: scope, label: scope } } : {}),
  }
}

const DECISION = { 'allow-once': 'allow-once', 'allow-always': 'allow-session', reject: 'reject' } as const

/**
 * Answers the host's `approval/request` by asking the client. The turn's cancel aborts
 * `signal`: the request is cancelled on the wire. A client answering `cancelled` by itself
 * cancels that call only (CANCELLED to the host). The dialog follows every update queued
 * before it; a call already shown `in_progress` (a tool body asking, e.g. an escalation) is
 * shown `pending` while the dialog is open and `in_progress` again once allowed.
 */
export async function askPermission(b: AcpConnection, state: SessionState, params: ApprovalParams, signal: AbortSignal): Promise<{ decision: 'allow-once' | 'allow-session' | 'reject' }> {
  const request = approvalOf(params)
  const callCard = request.callId ? state.live.callCard(request.callId) : undefined
  const wire = permissionRequest(state.id, request, callCard, state.cwd)
  const { toolCallId } = wire.toolCall
  const token = state.turn
  const running = !!token && turnOpen(state) && token.started.has(toolCallId)
  if (running) b.send(state.id, { sessionUpdate: 'tool_call_update', toolCallId, status: 'pending' })
  await b.flush()
  b.debug(`-> session/request_permission ${state.id} ${toolCallId}`)
  const response = await b.client.request('session/request_permission', wire, { cancellationSignal: signal, stopWaitingOnCancel: true })
  const outcome = signal.aborted ? 'cancelled' : outcomeOf(response)
  if (outcome === 'cancelled') throw new DshError('CANCELLED', 'the editor cancelled the permission request')
  if (running && state.turn === token && turnOpen(state) && outcome !== 'reject') {
    b.send(state.id, { sessionUpdate: 'tool_call_update', toolCallId, status: 'in_progress' })
  }
  return { decision: DECISION[outcome] }
}

/**
 * The `question` tool over ACP: each question is one `session/request_permission` whose
 * options are its answers (ACP has no free-text answer, and picks one option: a
 * multi-select question gets the one chosen). A cancelled dialog is no answer (CANCELLED).
 */
export async function askQuestions(b: AcpConnection, state: SessionState, params: QuestionParams, signal: AbortSignal): Promise<{ answers: { id: string; selected: string[] }[] }> {
  const answers: { id: string; selected: string[] }[] = []
  for (const q of params.questions) {
    const detail = q.options.filter((o) => o.description).map((o) => `- ${o.label}: ${o.description!}`).join('\n')
    const wire: acp.RequestPermissionRequest = {
      sessionId: state.id,
      toolCall: {
        toolCallId: params.toolCallId, title: q.question, kind: 'other', status: 'pending',
        content: [textBlock(detail ? `${q.question}\n\n${detail}` : q.question)], locations: [], rawInput: { question: q.question },
      },
      options: q.options.map((o) => ({ optionId: o.id, name: o.label, kind: 'allow_once' as const })),
    }
    await b.flush()
    b.debug(`-> session/request_permission ${state.id} ${params.toolCallId} (question ${q.id})`)
    const response = await b.client.request('session/request_permission', wire, { cancellationSignal: signal, stopWaitingOnCancel: true })
    if (signal.aborted || response.outcome.outcome === 'cancelled') throw new DshError('CANCELLED', 'the editor cancelled the question')
    const chosen = response.outcome.optionId
    if (!q.options.some((o) => o.id === chosen)) throw new DshError('INVALID_ANSWER', `the editor chose an option the question does not have: ${JSON.stringify(String(chosen).slice(0, 40))}`)
    answers.push({ id: q.id, selected: [chosen] })
  }
  return { answers }
}
