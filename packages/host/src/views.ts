import { presentCall, presentResult, type ToolDefinition } from '@dsh/core'
import type { Json, SessionEvent, ToolContent } from '@dsh/protocol'

/** The surface-neutral view of an event (see @dsh/host-api EventView). */
export type EventView =
  | { kind: 'tool-call'; callId: string; tool: string; card: { card: string; [key: string]: unknown } }
  | { kind: 'tool-result'; callId: string; tool: string; card: { card: string; [key: string]: unknown }; isError: boolean }
  | null

/** What a view needs besides the event: the tool's definition (its pure presenters) and a call's arguments. */
export interface Presenter {
  tool(name: string): ToolDefinition | undefined
  /** The arguments logged with `tool/call` of `callId` (null when unknown). */
  argsOf(callId: string): Json
}

/**
 * The view of one event, pure: for `tool/call` the tool's call card, for `tool/result`
 * its result card (generic when the tool is unknown or its presenter fails); null for
 * every other event. Live and replayed logs give the same views for the same presenter.
 */
export function viewOf(event: SessionEvent, presenter: Presenter): EventView {
  if (event.type === 'tool/call') {
    const data = event.data as { callId: string; name: string; args?: Json }
    return { kind: 'tool-call', callId: data.callId, tool: data.name, card: presentCall(presenter.tool(data.name), data.name, data.args ?? null) }
  }
  if (event.type === 'tool/result') {
    const data = event.data as unknown as { callId: string; name: string; content: ToolContent[]; isError?: boolean }
    const result = { content: data.content, isError: !!data.isError }
    return {
      kind: 'tool-result', callId: data.callId, tool: data.name, isError: result.isError,
      card: presentResult(presenter.tool(data.name), presenter.argsOf(data.callId), result),
    }
  }
  return null
}

/**
 * Remembers call arguments of one session's log as it is read (in seq order), so
 * `tool/result` views can be computed; `view(event)` must be fed every event once, in order.
 */
export class SessionViewer {
  private readonly args = new Map<string, Json>()
  private readonly presenter: Presenter

  constructor(tool: (name: string) => ToolDefinition | undefined) {
    this.presenter = { tool, argsOf: (callId) => this.args.get(callId) ?? null }
  }

  view(event: SessionEvent): EventView {
    if (event.type === 'tool/call') {
      const data = event.data as { callId: string; args?: Json }
      this.args.set(data.callId, data.args ?? null)
    }
    const view = viewOf(event, this.presenter)
    if (event.type === 'tool/result') this.args.delete((event.data as { callId: string }).callId)
    return view
  }
}

/** Views of a whole log from the start (replay). */
export function viewsOf(events: readonly SessionEvent[], tool: (name: string) => ToolDefinition | undefined): EventView[] {
  const viewer = new SessionViewer(tool)
  return events.map((e) => viewer.view(e))
}

/**
 * Views of a live session's log computed on demand, each at most once: `at(seq)` costs one
 * view plus a type check per event not indexed yet (never the views before it), so opening a
 * long session costs nothing until a client reads its history. Gives what `viewsOf` gives
 * for every event of a log whose call ids are unique (the agent keeps them unique); a result
 * takes the arguments of the latest call with its id before it.
 */
export class LazyViews {
  private readonly views = new Map<number, EventView>()
  /** callId → seqs of its `tool/call` events, for events [0, indexed). */
  private readonly calls = new Map<string, number[]>()
  private indexed = 0

  constructor(private readonly events: () => readonly SessionEvent[], private readonly tool: (name: string) => ToolDefinition | undefined) {}

  at(seq: number): EventView {
    const cached = this.views.get(seq)
    if (cached !== undefined) return cached
    const events = this.events()
    const event = events[seq]
    if (!event || (event.type !== 'tool/call' && event.type !== 'tool/result')) return null
    for (; this.indexed < seq; this.indexed++) {
      const e = events[this.indexed]!
      if (e.type !== 'tool/call') continue
      const id = (e.data as { callId: string }).callId
      const seqs = this.calls.get(id)
      if (seqs) seqs.push(e.seq)
      else this.calls.set(id, [e.seq])
    }
    const view = viewOf(event, { tool: this.tool, argsOf: (callId) => this.argsBefore(events, callId, seq) })
    this.views.set(seq, view)
    return view
  }

  private argsBefore(events: readonly SessionEvent[], callId: string, seq: number): Json {
    const seqs = this.calls.get(callId) ?? []
    for (let i = seqs.length - 1; i >= 0; i--) {
      if (seqs[i]! < seq) return (events[seqs[i]!]!.data as { args?: Json }).args ?? null
    }
    return null
  }
}
