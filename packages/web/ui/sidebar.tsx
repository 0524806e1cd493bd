import { useEffect, useRef, useState } from 'preact/hooks'
import { call, errorText } from './api.js'
import type { Summary } from './main.js'

const SEEN_KEY = 'dsh.seen'

export function seenCounts(): Record<string, number> {
  try { return JSON.parse(localStorage.getItem(SEEN_KEY) ?? '{}') as Record<string, number> } catch { return {} }
}
export function markSeen(id: string, events: number): void {
  const seen = seenCounts()
  seen[id] = events
  localStorage.setItem(SEEN_KEY, JSON.stringify(seen))
}

function dotOf(s: Summary, waiting: Set<string>, current: string | null): string {
  if (s.status === 'waiting' || waiting.has(s.id)) return 'waiting'
  if (s.status === 'running') return 'running'
  if (s.id !== current && (seenCounts()[s.id] ?? s.events) < s.events) return 'unseen'
  return 'idle'
}

interface Props {
  sessions: Summary[]
  current: string | null
  waiting: Set<string>
  navigate(path: string): void
  onError(text: string): void
  refresh(): void
  openSettings(): void
}

/** Workspaces with their sessions; titles filter at once, content search after a pause. */
export function Sidebar(p: Props) {
  const [query, setQuery] = useState('')
  const [found, setFound] = useState<Set<string> | null>(null)
  const [renaming, setRenaming] = useState<string | null>(null)
  const [confirmDelete, setConfirmDelete] = useState<string | null>(null)
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)
  useEffect(() => {
    clearTimeout(timer.current)
    if (!query.trim()) { setFound(null); return }
    timer.current = setTimeout(() => {
      void call('session/list', { query, limit: 200 }).then((r) => setFound(new Set(r.sessions.map((s) => s.id))), () => setFound(null))
    }, 350)
    return () => clearTimeout(timer.current)
  }, [query])
  const q = query.trim().toLowerCase()
  const visible = p.sessions.filter((s) => !q || (s.title ?? '').toLowerCase().includes(q) || s.id.includes(q) || found?.has(s.id))
  const groups = new Map<string, Summary[]>()
  for (const s of visible) groups.set(s.workspace, [...(groups.get(s.workspace) ?? []), s])
  const act = (fn: () => Promise<unknown>) => void fn().then(() => p.refresh(), (e: unknown) => p.onError(errorText(e)))
  return (
    <nav class="sidebar">
      <div class="sidebar-top">
        <button data-testid="new-session" class="primary" onClick={() => p.navigate('/')}>New session</button>
        <button onClick={p.openSettings} data-testid="settings-open" title="settings">⚙</button>
      </div>
      <input data-testid="search" type="search" placeholder="Search sessions" value={query} onInput={(e) => setQuery((e.target as HTMLInputElement).value)} />
      {[...groups].map(([ws, list]) => (
        <div class="ws-group" key={ws}>
          <div class="ws-name" title={ws}>{ws.split('/').filter(Boolean).at(-1) ?? '/'}</div>
          {list.map((s) => (
            <div key={s.id} data-testid="session-item" data-session-id={s.id} data-status={dotOf(s, p.waiting, p.current)}
              class={`session-item ${s.id === p.current ? 'current' : ''}`}>
              <span class={`dot ${dotOf(s, p.waiting, p.current)}`} />
              {renaming === s.id
                ? <input data-testid="rename-input" value={s.title ?? ''} ref={(el) => el?.focus()}
                  onKeyDown={(e) => {
                    const v = (e.target as HTMLInputElement).value.trim()
                    if (e.key === 'Enter' && v) { setRenaming(null); act(() => call('session/rename', { sessionId: s.id, title: v })) }
                    if (e.key === 'Escape') setRenaming(null)
                  }} onBlur={() => setRenaming(null)} />
                : <a href={`/s/${s.id}`} data-link onClick={(e) => { e.preventDefault(); p.navigate(`/s/${s.id}`) }}>{s.title ?? 'Untitled'}</a>}
              <span class="item-actions">
                <button title="rename" data-action="rename" onClick={() => setRenaming(s.id)}>✎</button>
                <button title="fork" data-action="fork" onClick={() => void call('session/fork', { sessionId: s.id }).then((r) => { p.refresh(); p.navigate(`/s/${r.session.id}`) }, (e: unknown) => p.onError(errorText(e)))}>⑂</button>
                {confirmDelete === s.id
                  ? <button class="danger" data-action="confirm-delete" onClick={() => { setConfirmDelete(null); act(() => call('session/delete', { sessionId: s.id }).then(() => { if (p.current === s.id) p.navigate('/') })) }}>delete?</button>
                  : <button title="delete" data-action="delete" onClick={() => setConfirmDelete(s.id)}>🗑</button>}
              </span>
            </div>
          ))}
        </div>
      ))}
      {visible.length === 0 && <div class="muted small">{q ? 'no match' : 'no sessions yet'}</div>}
    </nav>
  )
}
