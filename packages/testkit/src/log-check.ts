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
 * sent — one per step plus one per logged retry — as header + derived history at the
 * moment the request left. `derive` is the session's own fold (deriveMessages).
 */
export function requestsFromLog(events: readonly SessionEvent[], derive: (events: readonly SessionEvent[]) => ModelMessage[]): LoggedRequest[] {
  const out: LoggedRequest[] = []
  let header: { system: string; tools: ToolSchema[]; config: ModelConfig } | undefined
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!
    if (event.type === 'request/header') header = event.data as typeof header
    if (event.type !== 'step/start') continue
    // the request leaves after the step's own input (steered messages, header) is logged
    let j = i + 1
    while (j < events.length && !REQUEST_SENT.has(events[j]!.type)) {
      if (events[j]!.type === 'request/header') header = events[j]!.data as typeof header
      j++
    }
    if (j >= events.length || events[j]!.type === 'step/end' && failedBeforeSending(events, j)) continue
    if (!header) throw new Error(`step at seq ${event.seq} sent a request with no request/header logged before it`)
    const request = { ...header, messages: derive(events.slice(0, j)) }
    out.push(request)
    for (let k = j; k < events.length && events[k]!.type !== 'step/end'; k++) {
      if (events[k]!.type === 'llm/retry') out.push(request)
    }
  }
  return out
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
