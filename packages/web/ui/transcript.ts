/**
 * The transcript as a pure fold of viewed session events (replay and live give the same
 * result). Items are mutated in place and `version` bumps on every change; the view
 * re-renders once per animation frame.
 */
export interface Card { card: string; [key: string]: unknown }
export interface View { kind: 'tool-call' | 'tool-result'; callId: string; tool: string; card: Card; isError?: boolean }
export interface LoggedEvent { type: string; seq: number; time: number; data: unknown }

export type ToolStatus = 'running' | 'done' | 'failed' | 'interrupted'

export interface UserItem { kind: 'user'; key: string; text: string; images: number; via: string | undefined }
export interface AssistantItem { kind: 'assistant'; key: string; text: string; reasoning: string; streaming: boolean }
export interface ToolItem {
  kind: 'tool'; key: string; callId: string; tool: string; args: unknown
  call: Card | null; result: Card | null; status: ToolStatus; output: string; started: number; ended: number | null; turn: number
  /** The subagent session a `task` call started. */
  child?: string
}
export interface NoticeItem { kind: 'notice'; key: string; level: string; message: string }
export interface TurnEndItem { kind: 'turn-end'; key: string; reason: string; error: string | null }
export type Item = UserItem | AssistantItem | ToolItem | NoticeItem | TurnEndItem

export interface Todo { content: string; status: string; activeForm?: string }
export interface StepInfo { turn: number; step: number; started: number; ended: number | null; usage: Record<string, number> | null; request: { model?: string; provider?: string; tools: number; system: number } | null }

export const INTERRUPTED_MARK = '[interrupted:'

export class Transcript {
  items: Item[] = []
  todos: Todo[] = []
  steps: StepInfo[] = []
  lastSeq = -1
  turnRunning = false
  title: string | null = null
  version = 0
  private readonly index = new Map<string, Item>()
  private turn = 0
  private header: StepInfo['request'] = null

  private add(item: Item): void {
    this.items.push(item)
    this.index.set(item.key, item)
  }

  private tool(callId: string): ToolItem | undefined {
    const item = this.index.get(`tool:${callId}`)
    return item?.kind === 'tool' ? item : undefined
  }

  /** Applies one durable event; events at or below `lastSeq` are ignored (no duplicates). */
  apply(event: LoggedEvent, view: View | null): void {
    if (event.seq <= this.lastSeq) return
    this.lastSeq = event.seq
    this.version++
    const d = (event.data ?? {}) as Record<string, unknown>
    switch (event.type) {
      case 'turn/start':
        this.turn = Number(d.turn ?? this.turn + 1)
        this.turnRunning = true
        break
      case 'user/message': {
        const content = (d.content ?? []) as { type: string; text?: string }[]
        this.add({ kind: 'user', key: `user:${String(d.id)}`, text: content.filter((c) => c.type === 'text').map((c) => c.text).join(''),
          images: content.filter((c) => c.type === 'image').length, via: d.via as string | undefined })
        break
      }
      case 'assistant/chunk': {
        const key = `assistant:${String(d.messageId)}`
        let item = this.index.get(key) as AssistantItem | undefined
        if (!item) {
          item = { kind: 'assistant', key, text: '', reasoning: '', streaming: true }
          this.add(item)
        }
        if (d.kind === 'reasoning') item.reasoning += String(d.delta ?? '')
        else item.text += String(d.delta ?? '')
        break
      }
      case 'assistant/message': {
        const key = `assistant:${String(d.id)}`
        const blocks = (d.content ?? []) as { type: string; text?: string }[]
        const text = blocks.filter((b) => b.type === 'text').map((b) => b.text ?? '').join('')
        const reasoning = blocks.filter((b) => b.type === 'reasoning').map((b) => b.text ?? '').join('')
        let item = this.index.get(key) as AssistantItem | undefined
        if (!item && (text || reasoning)) {
          item = { kind: 'assistant', key, text: '', reasoning: '', streaming: false }
          this.add(item)
        }
        if (item) Object.assign(item, { text, reasoning, streaming: false })
        break
      }
      case 'tool/call': {
        const callId = String(d.callId)
        if (this.tool(callId)) break
        this.add({ kind: 'tool', key: `tool:${callId}`, callId, tool: String(d.name), args: d.args, call: view?.card ?? null, result: null,
          status: 'running', output: '', started: event.time, ended: null, turn: this.turn })
        break
      }
      case 'tool/result': {
        const callId = String(d.callId)
        let item = this.tool(callId)
        if (!item) {
          item = { kind: 'tool', key: `tool:${callId}`, callId, tool: String(d.name), args: null, call: null, result: null, status: 'running', output: '', started: event.time, ended: null, turn: this.turn }
          this.add(item)
        }
        item.result = view?.card ?? { card: 'generic', text: textOf(d.content) }
        item.ended = event.time
        const interrupted = d.synthetic === true && textOf(d.content).startsWith(INTERRUPTED_MARK)
        const card = item.result
        const exitFailed = card.card === 'terminal' && ((typeof card.exitCode === 'number' && card.exitCode !== 0) || typeof card.signal === 'string')
        item.status = interrupted ? 'interrupted' : d.isError === true || view?.isError === true || exitFailed ? 'failed' : 'done'
        break
      }
      case 'subagent/start': {
        const item = this.tool(String(d.callId))
        if (item) item.child = String(d.childSessionId)
        break
      }
      case 'todo/write':
        this.todos = Array.isArray(d.todos) ? d.todos as Todo[] : []
        break
      case 'request/header': {
        const config = (d.config ?? {}) as { model?: string; provider?: string }
        this.header = { ...(config.model ? { model: config.model } : {}), ...(config.provider ? { provider: config.provider } : {}), tools: Array.isArray(d.tools) ? d.tools.length : 0, system: String(d.system ?? '').length }
        break
      }
      case 'step/start':
        this.steps.push({ turn: Number(d.turn), step: Number(d.step), started: event.time, ended: null, usage: null, request: this.header })
        break
      case 'step/end': {
        const s = this.steps.at(-1)
        if (s) { s.ended = event.time; s.usage = (d.usage ?? null) as StepInfo['usage'] }
        break
      }
      case 'turn/end': {
        this.turnRunning = false
        for (const item of this.items) {
          if (item.kind === 'assistant') item.streaming = false
          if (item.kind === 'tool' && item.status === 'running') { item.status = 'interrupted'; item.ended = event.time }
        }
        const error = d.error as { code?: string; message?: string } | undefined
        if (d.reason !== 'completed') this.add({ kind: 'turn-end', key: `turn-end:${event.seq}`, reason: String(d.reason), error: error ? `${error.code ?? ''}: ${error.message ?? ''}` : null })
        break
      }
      case 'session/title':
        this.title = typeof d.title === 'string' ? d.title : this.title
        break
      case 'notice':
        this.add({ kind: 'notice', key: `notice:${event.seq}`, level: String(d.level ?? 'info'), message: String(d.message ?? '') })
        break
      case 'llm/retry':
        this.add({ kind: 'notice', key: `retry:${event.seq}`, level: 'warn', message: `${String(d.code)}: retrying (attempt ${String(d.attempt)})` })
        break
    }
  }

  /** Live output of a running call (not a session event; the result carries the whole of it). */
  output(callId: string, data: string): void {
    const item = this.tool(callId)
    if (!item || item.status !== 'running') return
    item.output += data
    if (item.output.length > 200_000) item.output = item.output.slice(-150_000)
    this.version++
  }
}

export function textOf(content: unknown): string {
  if (!Array.isArray(content)) return ''
  return content.map((c: { type?: string; text?: string }) => c.type === 'text' ? c.text ?? '' : '').join('')
}
