import type { GenerateRequest, ModelConfig, ModelMessage, SessionEvent, ToolSchema } from '@dsh/protocol'

/** What one model request must have been, according to the session log. */
export interface LoggedRequest {
  system: string
  tools: ToolSchema[]
  config: ModelConfig
  messages: ModelMessage[]
}

const REQUEST_SENT = new Set(['assistant/chunk', 'assistant/message', 'llm/retry', 'step/end'])

/**
 * "Model-visible means logged": rebuilds, from the log alone, every request the agent
 * sent, in the order they left — one per step plus one per logged retry, each as the
 * header + derived history at the moment it left (a retry is derived again: a listener
 * may have compacted history before it) — and every summary request a compaction logged
 * (`compaction/start` carries it whole: system, config and its one user message; no
 * tools). `derive` is the session's own fold (deriveMessages).
 */
export function requestsFromLog(events: readonly SessionEvent[], derive: (events: readonly SessionEvent[]) => ModelMessage[]): LoggedRequest[] {
  const out: LoggedRequest[] = []
  let header: { system: string; tools: ToolSchema[]; config: ModelConfig } | undefined
  /** What is about to leave: the step's first request, or a retry. */
  let pending: { kind: 'step' | 'retry'; seq: number } | undefined
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!
    if (event.type === 'request/header') header = event.data as unknown as typeof header
    // the request leaves after the step's own input (steered messages, compaction, header) is
    // logged; a compaction that is not a 'threshold' one runs after a failed attempt left
    if (pending && (REQUEST_SENT.has(event.type) || afterFailure(event))) {
      if (!(pending.kind === 'step' && event.type === 'step/end' && failedBeforeSending(events, i))) {
        if (!header) throw new Error(`step at seq ${pending.seq} sent a request with no request/header logged before it`)
        out.push({ ...header, messages: derive(events.slice(0, i)) })
      }
      pending = undefined
    }
    if (event.type === 'compaction/start') out.push(summaryRequest(event))
    if (event.type === 'step/start') pending = { kind: 'step', seq: event.seq }
    if (event.type === 'llm/retry') pending = { kind: 'retry', seq: event.seq }
  }
  return out
}

function afterFailure(event: SessionEvent): boolean {
  return event.type === 'compaction/start' && (event.data as { reason?: string }).reason !== 'threshold'
}

/** The summary request a `compaction/start` event logged (see @dsh/core compaction). */
function summaryRequest(event: SessionEvent): LoggedRequest {
  const { request } = event.data as unknown as { request: { system: string; config: ModelConfig; prompt: string } }
  return { system: request.system, tools: [], config: request.config, messages: [{ role: 'user', content: [{ type: 'text', text: request.prompt }] }] }
}

/** Failures that happen before a request leaves (no endpoint to send it to). */
const PRE_SEND = new Set(['NO_CREDENTIALS', 'UNKNOWN_PROVIDER', 'NO_ADAPTER'])

function failedBeforeSending(events: readonly SessionEvent[], stepEnd: number): boolean {
  const next = events[stepEnd + 1]
  if (next?.type !== 'turn/end') return false
  const error = (next.data as { error?: { code: string } }).error
  return !!error && PRE_SEND.has(error.code)
}

/** Turns logged requests into provider bodies with the adapter's own pure builder. */
export function expectedBodies(requests: LoggedRequest[], build: (request: GenerateRequest) => unknown): unknown[] {
  const signal = new AbortController().signal
  return requests.map((r) => JSON.parse(JSON.stringify(build({ ...r, signal }))))
}
