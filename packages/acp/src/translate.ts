import type * as acp from '@agentclientprotocol/sdk/unstable'
import { FILE_BEFORE_EVENT, type AssistantBlock, type CallCard, type FileBeforeData, type Json, type ResultCard, type SessionEvent, type ToolResult, type UserContent } from '@dsh/protocol'
import { callToWire, progressToWire, resultToWire, type WireOptions } from './wire.js'

/** Presentation seam: the tool's pure presenters (core `presentCall` / `presentResult`). */
export interface Presenter {
  call(name: string, args: Json): CallCard
  result(name: string, args: Json, result: ToolResult): ResultCard
}

/** The host's view of an event (`session/event`, `session/history`): the tool's own card for calls and results. */
export type EventCards =
  | { kind: 'tool-call'; card: { card: string } }
  | { kind: 'tool-result'; card: { card: string } }

/** A plan entry as `todo/write` logs it. */
interface Todo { content: string; status: 'pending' | 'in_progress' | 'completed'; activeForm?: string }

/**
 * `live`: the stream of a running turn (text and reasoning from `assistant/chunk`,
 * user messages are the client's own and not echoed). `replay`: a stored log for
 * `session/load` (user messages, assembled assistant messages, no chunks).
 */
export type ProjectionMode = 'live' | 'replay'

interface CallState { name: string; args: Json; card: CallCard; announced: boolean; streamed: string }

/**
 * Session events → ACP `session/update` payloads. Deterministic and I/O-free (the
 * presenter is pure), so live streaming and history replay produce the same wire for the
 * same log. One projector per session and mode; feed events in log order.
 * Message ids are the harness's `<turn>:<step>` (user messages: their logged id).
 */
export class SessionProjector {
  private readonly calls = new Map<string, CallState>()
  private readonly streamedMessages = new Set<string>()
  /** Replaced file contents a call logged (`file/before`), per call id, then path. */
  private readonly before = new Map<string, Map<string, string>>()

  constructor(private readonly opts: WireOptions, private readonly present: Presenter, readonly mode: ProjectionMode) {}

  /** The updates of one event; `view` (the host's) gives the call or result card, else the presenter makes it. */
  push(event: SessionEvent, view?: EventCards | null): acp.SessionUpdate[] {
    const data = event.data as Record<string, unknown>
    switch (event.type) {
      case 'user/message':
        return this.mode === 'replay' ? userChunks(data.id as string, data.content as UserContent[]) : []
      case 'assistant/chunk': {
        if (this.mode === 'replay') return []
        const { messageId, kind, delta } = data as { messageId: string; kind: 'text' | 'reasoning'; delta: string }
        this.streamedMessages.add(messageId)
        return [{ sessionUpdate: kind === 'text' ? 'agent_message_chunk' : 'agent_thought_chunk', messageId, content: { type: 'text', text: delta } }]
      }
      case 'assistant/message':
        return this.assistantMessage(data.id as string, data.content as AssistantBlock[])
      case 'tool/call': {
        const { callId, name, args } = data as { callId: string; name: string; args: Json }
        return this.announce(callId, name, args, view?.kind === 'tool-call' ? view.card as CallCard : undefined)
      }
      case 'tool/result': {
        const { callId, name, content, isError } = data as unknown as { callId: string; name: string } & ToolResult
        return this.finish(callId, name, { content, isError }, view?.kind === 'tool-result' ? view.card as ResultCard : undefined)
      }
      case FILE_BEFORE_EVENT: {
        const { callId, path, oldText } = data as unknown as FileBeforeData
        if (typeof callId === 'string' && typeof path === 'string' && typeof oldText === 'string') {
          const files = this.before.get(callId) ?? new Map<string, string>()
          this.before.set(callId, files.set(path, oldText))
        }
        return []
      }
      case 'todo/write': {
        const todos = (data.todos ?? []) as Todo[]
        return [{ sessionUpdate: 'plan', entries: todos.map((t) => ({ content: t.content, priority: 'medium', status: t.status })) }]
      }
      default:
        return []
    }
  }

  /** The call's body is starting (after approval and guards): `in_progress`. */
  started(callId: string): acp.SessionUpdate[] {
    return this.calls.has(callId) ? [{ sessionUpdate: 'tool_call_update', toolCallId: callId, status: 'in_progress' }] : []
  }

  /** Live output of a running call. */
  progress(callId: string, delta: string): acp.SessionUpdate[] {
    const call = this.calls.get(callId)
    if (!call || !delta) return []
    call.streamed += delta
    return [{ sessionUpdate: 'tool_call_update', ...progressToWire(callId, call.card, call.streamed, delta, this.opts) }]
  }

  /** The call card of a known call (for permission requests). */
  callCard(callId: string): CallCard | undefined {
    return this.calls.get(callId)?.card
  }

  private assistantMessage(id: string, content: readonly AssistantBlock[]): acp.SessionUpdate[] {
    const out: acp.SessionUpdate[] = []
    const streamed = this.mode === 'live' && this.streamedMessages.has(id)
    this.streamedMessages.delete(id)
    for (const block of content) {
      if (block.type === 'tool-call') {
        // Known from the message; announced by its `tool/call` (or by its result after a cut).
        if (!this.calls.has(block.id)) this.calls.set(block.id, { name: block.name, args: parseArgs(block.arguments), card: { card: 'generic', title: block.name }, announced: false, streamed: '' })
      } else if (!streamed && block.text) {
        out.push({ sessionUpdate: block.type === 'text' ? 'agent_message_chunk' : 'agent_thought_chunk', messageId: id, content: { type: 'text', text: block.text } })
      }
    }
    return out
  }

  private announce(callId: string, name: string, args: Json, viewed?: CallCard): acp.SessionUpdate[] {
    const card = viewed ?? this.present.call(name, args)
    const previous = this.calls.get(callId)
    this.calls.set(callId, { name, args, card, announced: true, streamed: previous?.streamed ?? '' })
    return [{ sessionUpdate: 'tool_call', toolCallId: callId, status: 'pending', ...callToWire(callId, card, args, this.opts) }]
  }

  private finish(callId: string, name: string, result: ToolResult, viewed?: ResultCard): acp.SessionUpdate[] {
    const out: acp.SessionUpdate[] = []
    let call = this.calls.get(callId)
    if (!call?.announced) {
      out.push(...this.announce(callId, call?.name ?? name, call?.args ?? null))
      call = this.calls.get(callId)!
    }
    const card = withBefore(viewed ?? this.present.result(call.name, call.args, result), this.before.get(callId))
    this.before.delete(callId)
    for (const update of resultToWire(callId, call.card, card, result, this.opts, call.streamed)) {
      out.push({ sessionUpdate: 'tool_call_update', ...update })
    }
    this.calls.delete(callId)
    return out
  }
}

/** A diff card whose new-file sides (`oldText: null`) get the content the call logged as replaced. */
function withBefore(card: ResultCard, before: ReadonlyMap<string, string> | undefined): ResultCard {
  if (!before || card.card !== 'diff') return card
  return { ...card, diffs: card.diffs.map((d) => (d.oldText === null && before.has(d.path) ? { ...d, oldText: before.get(d.path)! } : d)) }
}

function parseArgs(text: string): Json {
  try {
    return text.trim() ? JSON.parse(text) as Json : {}
  } catch {
    return null
  }
}

/** A logged user message as `user_message_chunk`s (text and images, in order). */
export function userChunks(messageId: string, content: readonly UserContent[]): acp.SessionUpdate[] {
  return content.map((part) => ({
    sessionUpdate: 'user_message_chunk' as const,
    messageId,
    content: part.type === 'text' ? { type: 'text' as const, text: part.text } : { type: 'image' as const, mimeType: part.mimeType, data: part.data },
  }))
}
