import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { call, errorText, respond } from './api.js'
import { ToolCard } from './cards.js'
import { Composer, type Queued } from './composer.js'
import { LiveStream, connState, onConnState } from './live.js'
import { MARKDOWN_LIMIT, renderMarkdown } from './markdown.js'
import { Approval, QuestionTakeover, type PendingRequest } from './takeover.js'
import { Transcript, type AssistantItem, type Item } from './transcript.js'
import type { Describe, Summary } from './main.js'

const WINDOW = 200

function Markdown({ text }: { text: string }) {
  const html = useMemo(() => text.length > MARKDOWN_LIMIT ? null : renderMarkdown(text), [text])
  if (html === null) return <pre class="plain">{text}</pre>
  return <div class="md" dangerouslySetInnerHTML={{ __html: html }} />
}

function Assistant({ item }: { item: AssistantItem }) {
  return (
    <div class="message assistant" data-testid="message" data-role="assistant" data-streaming={item.streaming ? 'true' : 'false'}>
      {item.reasoning && <details class="reasoning"><summary>reasoning</summary><pre>{item.reasoning}</pre></details>}
      {item.text && <Markdown text={item.text} />}
    </div>
  )
}

function Row({ item, frozen, children }: { item: Item; frozen: boolean; children: Summary[] }) {
  switch (item.kind) {
    case 'user': return <div class="message user" data-testid="message" data-role="user"><pre class="plain">{item.text}</pre>{item.images > 0 && <span class="muted small">+{item.images} image(s)</span>}</div>
    case 'assistant': return <Assistant item={item} />
    case 'tool': return <ToolCard item={item} frozen={frozen} childSession={item.child ?? children.find((c) => c.parent?.callId === item.callId)?.id} />
    case 'notice': return <div class={`notice ${item.level}`}>{item.message}</div>
    case 'turn-end': return <div class="notice warn" data-testid="turn-end" data-reason={item.reason}>turn ended: {item.reason}{item.error ? ` (${item.error})` : ''}</div>
  }
}

export function SessionView({ id, describe, sessions, onError }: { id: string; describe: Describe | null; sessions: Summary[]; onError(text: string): void }) {
  const t = useMemo(() => new Transcript(), [id])
  const [, setTick] = useState(0)
  const [status, setStatus] = useState<string>('idle')
  const [config, setConfig] = useState<Record<string, any> | null>(null)
  const [requests, setRequests] = useState<Map<string, PendingRequest>>(new Map())
  const [deleted, setDeleted] = useState(false)
  const [readOnly, setReadOnly] = useState(false)
  const [ready, setReady] = useState(false)
  const [frozen, setFrozen] = useState(connState() !== 'connected')
  const [queue, setQueue] = useState<Queued[]>([])
  const [shown, setShown] = useState(WINDOW)
  const [inspect, setInspect] = useState(false)
  const frame = useRef(0)
  const bottom = useRef<HTMLDivElement>(null)
  const nextQueued = useRef(1)

  useEffect(() => onConnState((s) => setFrozen(s !== 'connected')), [])
  useEffect(() => {
    setReady(false); setDeleted(false); setRequests(new Map()); setQueue([]); setShown(WINDOW)
    /** Streaming is batched: at most one render per animation frame. */
    const schedule = () => { if (!frame.current) frame.current = requestAnimationFrame(() => { frame.current = 0; setTick((n) => n + 1) }) }
    const stream = new LiveStream((after) => `/api/events?session=${encodeURIComponent(id)}${after !== null ? `&after=${after}` : ''}`, {
      event: (f: { event: any; view: any }) => { t.apply(f.event, f.view); schedule() },
      output: (f: { toolCallId: string; data: string }) => { t.output(f.toolCallId, f.data); schedule() },
      status: (f: { status: string }) => setStatus(f.status),
      ready: (f: { session: any; readOnly: boolean }) => { setConfig(f.session.config); setStatus(f.session.status); setReadOnly(f.readOnly); setReady(true); schedule() },
      request: (r: PendingRequest) => setRequests((m) => new Map(m).set(r.params.requestId, r)),
      'request-done': (f: { requestId: string }) => setRequests((m) => { const n = new Map(m); n.delete(f.requestId); return n }),
      deleted: () => setDeleted(true),
      notice: (f: { readOnly?: boolean }) => { if (f.readOnly) setReadOnly(true) },
      'stream-error': (e: { message: string }) => onError(e.message),
    }, () => t.lastSeq, () => {
      void call('session/get', { sessionId: id }).catch((e: unknown) => { if (errorText(e).includes('SESSION_NOT_FOUND')) { setDeleted(true); stream.close() } })
    })
    return () => { stream.close(); cancelAnimationFrame(frame.current); frame.current = 0 }
  }, [id])

  const running = status !== 'idle' || t.turnRunning
  // a queued message goes out when the turn is over
  useEffect(() => {
    if (running || !queue.length || !ready) return
    const [head, ...rest] = queue
    setQueue(rest)
    void call('session/prompt', { sessionId: id, prompt: head!.text }).catch((e: unknown) => onError(errorText(e)))
  }, [running, queue, ready])
  useEffect(() => { bottom.current?.scrollIntoView({ block: 'end' }) }, [t.version])

  const send = (text: string) => {
    if (text.startsWith('/')) {
      void call('session/command', { sessionId: id, line: text }).then((r) => { if (r.reply) onError(r.reply) }, (e: unknown) => onError(errorText(e)))
      return
    }
    void call('session/prompt', { sessionId: id, prompt: text }).catch((e: unknown) => onError(errorText(e)))
  }
  const stop = () => { setQueue([]); void call('session/cancel', { sessionId: id }).catch((e: unknown) => onError(errorText(e))) }
  const answer = (req: PendingRequest, result: unknown) => {
    setRequests((m) => { const n = new Map(m); n.delete(req.params.requestId); return n })
    void respond(id, req.params.requestId, result).catch((e: unknown) => onError(errorText(e)))
  }
  const setCfg = (method: 'session/set_mode' | 'session/set_model' | 'session/set_effort', params: any) =>
    void call(method, { sessionId: id, ...params }).then((r: any) => setConfig(r.config), (e: unknown) => onError(errorText(e)))
  const exportLog = async () => {
    try {
      const { jsonl } = await call('session/export', { sessionId: id })
      const a = document.createElement('a')
      a.href = URL.createObjectURL(new Blob([jsonl], { type: 'application/x-ndjson' }))
      a.download = `${id}.jsonl`
      a.click()
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000)
    } catch (e) { onError(errorText(e)) }
  }

  if (deleted) return <div class="empty" data-testid="session-deleted">This session was deleted.</div>
  const items = t.items.length > shown ? t.items.slice(-shown) : t.items
  const pending = [...requests.values()][0]
  const children = sessions.filter((s) => s.parent?.id === id && !s.parent.fork)
  const models = describe?.providers.find((p) => p.id === config?.provider)?.models ?? []
  return (
    <div class="session" data-session-id={id} data-ready={ready ? 'true' : 'false'} data-running={running ? 'true' : 'false'}>
      <header class="session-head">
        <span class="title">{t.title ?? sessions.find((s) => s.id === id)?.title ?? 'Untitled'}</span>
        {readOnly && <span class="badge">read-only</span>}
        {config && !readOnly && <>
          <select data-testid="permission-mode" value={config.permissionMode} onChange={(e) => setCfg('session/set_mode', { permissionMode: (e.target as HTMLSelectElement).value })}>
            {(describe?.permissionModes ?? [{ id: config.permissionMode }]).map((m) => <option key={m.id} value={m.id}>{m.id}</option>)}
          </select>
          <select data-testid="model" value={config.model} onChange={(e) => setCfg('session/set_model', { provider: config.provider, model: (e.target as HTMLSelectElement).value })}>
            {[...new Set([config.model, ...models])].map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
          <select data-testid="effort" value={config.reasoningEffort ?? ''} onChange={(e) => setCfg('session/set_effort', { reasoningEffort: (e.target as HTMLSelectElement).value || null })}>
            <option value="">default effort</option>
            {['off', 'low', 'medium', 'high', 'max'].map((x) => <option key={x} value={x}>{x}</option>)}
          </select>
        </>}
        <button onClick={() => setInspect(!inspect)} data-testid="inspector-toggle">requests</button>
        <button onClick={() => void exportLog()} data-testid="export">export</button>
      </header>
      {t.todos.length > 0 && (
        <div class="todo-strip" data-testid="todo-strip">
          {t.todos.map((x, i) => <span key={i} class={`todo ${x.status}`} data-status={x.status}>{x.status === 'completed' ? '✓' : x.status === 'in_progress' ? '▸' : '○'} {x.status === 'in_progress' ? x.activeForm ?? x.content : x.content}</span>)}
        </div>
      )}
      {inspect && (
        <div class="inspector" data-testid="inspector">
          {t.steps.map((s, i) => (
            <div key={i} class="small">turn {s.turn} step {s.step}: {s.request?.provider}/{s.request?.model}, {s.request?.tools ?? 0} tools, system {s.request?.system ?? 0} chars;
              {s.usage ? ` in ${s.usage.inputTokens ?? 0} / out ${s.usage.outputTokens ?? 0} tokens` : ''}{s.ended ? `, ${s.ended - s.started} ms` : ' (running)'}</div>
          ))}
        </div>
      )}
      <div class="transcript" data-testid="transcript">
        {t.items.length > shown && <button class="more" onClick={() => setShown(shown + WINDOW)}>show {Math.min(WINDOW, t.items.length - shown)} earlier items</button>}
        {items.map((item) => <Row key={item.key} item={item} frozen={frozen} children={children} />)}
        {running && <div class="muted small" data-testid="running-indicator">{status === 'waiting' ? 'waiting for you…' : 'working…'}</div>}
        <div ref={bottom} />
      </div>
      {pending?.method === 'approval/request' && <Approval key={pending.params.requestId} req={pending} answer={(r) => answer(pending, r)} />}
      {pending?.method === 'question/request' && <QuestionTakeover key={pending.params.requestId} req={pending} answer={(r) => answer(pending, r)} />}
      {!readOnly && <Composer running={running} disabled={!ready} queue={queue} onSend={send}
        onQueue={(text) => setQueue((q) => [...q, { id: nextQueued.current++, text }])}
        onSteer={(q) => { setQueue((all) => all.filter((x) => x.id !== q.id)); void call('session/prompt', { sessionId: id, prompt: q.text, mode: 'steer' }).catch((e: unknown) => onError(errorText(e))) }}
        onEdit={(q, text) => setQueue((all) => all.map((x) => x.id === q.id ? { ...x, text } : x))}
        onRemove={(q) => setQueue((all) => all.filter((x) => x.id !== q.id))}
        onStop={stop} />}
    </div>
  )
}
