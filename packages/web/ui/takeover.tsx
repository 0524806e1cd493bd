import { useEffect, useRef, useState } from 'preact/hooks'
import { DiffHunks } from './cards.js'

export interface PendingRequest { method: string; params: any }

const DECISIONS = [
  { decision: 'allow-once', key: 'y', label: 'Allow once' },
  { decision: 'allow-session', key: 'a', label: 'Allow for this session' },
  { decision: 'reject', key: 'n', label: 'Reject' },
] as const

/** The approval takeover: what will run, why it asks, and three decisions (y / a / n, Esc rejects). */
export function Approval({ req, answer }: { req: PendingRequest; answer: (result: unknown) => void }) {
  const box = useRef<HTMLDivElement>(null)
  // the takeover takes the keyboard: focus leaves the composer
  useEffect(() => box.current?.focus(), [])
  const p = req.params as { title: string; tool: string; reason: string | null; rawInput: any; diff?: { path: string; oldText: string | null; newText: string }; options: { decision: string; label: string; scope?: string }[]; kind: string }
  const offered = new Set((p.options ?? []).map((o) => o.decision))
  const scope = p.options?.find((o) => o.decision === 'allow-session')?.scope
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement | null)?.tagName === 'TEXTAREA' && e.key !== 'Escape') return
      const hit = DECISIONS.find((d) => d.key === e.key.toLowerCase()) ?? (e.key === 'Escape' ? DECISIONS[2] : undefined)
      if (hit && (offered.has(hit.decision) || hit.decision === 'reject')) { e.preventDefault(); answer({ decision: hit.decision }) }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  })
  const command = typeof p.rawInput?.command === 'string' ? p.rawInput.command as string : null
  return (
    <div class="takeover" data-testid="approval" role="dialog" aria-label="approval" tabIndex={-1} ref={box}>
      <div class="takeover-title">{p.kind === 'escalation' ? 'Run outside the sandbox?' : 'Approve this call?'} <span class="muted">{p.tool}</span></div>
      <div class="takeover-sub">{p.title}</div>
      {command && <pre class="term-cmd">{command}</pre>}
      {p.diff && <DiffHunks {...p.diff} />}
      {!command && !p.diff && <pre class="tool-text">{JSON.stringify(p.rawInput, null, 2)}</pre>}
      {p.reason && <div class="reason">Why it asks: {p.reason}</div>}
      <div class="buttons">
        {DECISIONS.filter((d) => offered.has(d.decision) || d.decision === 'reject').map((d) => (
          <button key={d.decision} data-decision={d.decision} class={d.decision === 'reject' ? 'danger' : d.decision === 'allow-once' ? 'primary' : ''}
            onClick={() => answer({ decision: d.decision })}>{d.label} <kbd>{d.key}</kbd></button>
        ))}
      </div>
      {scope && <div class="muted small" data-testid="allow-session-scope">“Allow for this session” covers: {scope}</div>}
    </div>
  )
}

interface Question { id: string; question: string; options: { id: string; label: string; description?: string }[]; allowFreeText: boolean; multiSelect: boolean }

/** The question takeover: number keys pick an option of the current question, Enter moves on. */
export function QuestionTakeover({ req, answer }: { req: PendingRequest; answer: (result: unknown) => void }) {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => box.current?.focus(), [])
  const questions = (req.params.questions ?? []) as Question[]
  const [index, setIndex] = useState(0)
  const [picked, setPicked] = useState<Record<string, string[]>>({})
  const [texts, setTexts] = useState<Record<string, string>>({})
  const q = questions[index]
  const finish = (p: Record<string, string[]>) => {
    if (index + 1 < questions.length) return setIndex(index + 1)
    answer({ answers: questions.map((x) => ({ id: x.id, selected: p[x.id] ?? [], ...(texts[x.id] ? { text: texts[x.id] } : {}) })) })
  }
  const choose = (optionId: string) => {
    if (!q) return
    const cur = picked[q.id] ?? []
    const next = { ...picked, [q.id]: q.multiSelect ? (cur.includes(optionId) ? cur.filter((x) => x !== optionId) : [...cur, optionId]) : [optionId] }
    setPicked(next)
    if (!q.multiSelect) finish(next)
  }
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement | null)?.tagName === 'INPUT') return
      const n = Number(e.key)
      if (q && n >= 1 && n <= q.options.length) { e.preventDefault(); choose(q.options[n - 1]!.id) }
      else if (e.key === 'Enter' && q?.multiSelect) { e.preventDefault(); finish(picked) }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  })
  if (!q) return null
  return (
    <div class="takeover" data-testid="question" role="dialog" aria-label="question" tabIndex={-1} ref={box}>
      <div class="takeover-title">{q.question} <span class="muted small">{index + 1}/{questions.length}</span></div>
      <div class="options">
        {q.options.map((o, i) => (
          <button key={o.id} data-option-id={o.id} class={(picked[q.id] ?? []).includes(o.id) ? 'selected' : ''} onClick={() => choose(o.id)}>
            <kbd>{i + 1}</kbd> {o.label}{o.description && <span class="muted small"> — {o.description}</span>}
          </button>
        ))}
      </div>
      {q.allowFreeText && <input placeholder="or type an answer, Enter to send" value={texts[q.id] ?? ''} onInput={(e) => setTexts({ ...texts, [q.id]: (e.target as HTMLInputElement).value })}
        onKeyDown={(e) => { if (e.key === 'Enter') { e.preventDefault(); finish(picked) } }} />}
      {q.multiSelect && <button class="primary" onClick={() => finish(picked)}>Next <kbd>Enter</kbd></button>}
    </div>
  )
}
