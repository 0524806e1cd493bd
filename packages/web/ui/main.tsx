import { render } from 'preact'
import { useCallback, useEffect, useState } from 'preact/hooks'
import type { ResultOf } from '@dsh/host-api'
import { RpcError, call, errorText } from './api.js'
import { adoptToken } from './auth.js'
import { LiveStream, connState, onConnState, type ConnState } from './live.js'
import { NewSession } from './newsession.js'
import { SessionView } from './session.js'
import { Settings, applyTheme, type Theme } from './settings.js'
import { Sidebar, markSeen } from './sidebar.js'

export type Summary = ResultOf<'session/list'>['sessions'][number]
export type Describe = ResultOf<'host/describe'>

function sessionOfPath(path: string): string | null {
  const m = /^\/s\/([^/]+)$/.exec(path)
  return m ? decodeURIComponent(m[1]!) : null
}

function ConnectionStatus({ state }: { state: ConnState }) {
  const label = state === 'connected' ? 'connected' : state === 'reconnecting' ? 'reconnecting…' : 'offline: the dsh web server is not reachable'
  return <div class={`conn ${state}`} data-testid="connection-status" data-state={state} role="status">{label}</div>
}

function App() {
  const [path, setPath] = useState(location.pathname)
  const [sessions, setSessions] = useState<Summary[]>([])
  const [describe, setDescribe] = useState<Describe | null>(null)
  const [state, setState] = useState<ConnState>(connState())
  const [waiting, setWaiting] = useState<Set<string>>(new Set())
  const [toast, setToast] = useState<string | null>(null)
  const [unauthorised, setUnauthorised] = useState(false)
  const [settings, setSettings] = useState(false)
  const current = sessionOfPath(path)

  const navigate = useCallback((to: string) => {
    if (to !== location.pathname) history.pushState(null, '', to)
    setPath(to)
  }, [])
  const onError = useCallback((text: string) => { setToast(text); setTimeout(() => setToast((t) => t === text ? null : t), 8000) }, [])
  const refresh = useCallback(() => {
    void call('session/list', { limit: 200 }).then((r) => setSessions(r.sessions), (e: unknown) => {
      if (e instanceof RpcError && e.status === 401) setUnauthorised(true)
    })
  }, [])
  const loadDescribe = useCallback(() => void call('host/describe', {}).then(setDescribe, (e: unknown) => {
    if (e instanceof RpcError && e.status === 401) setUnauthorised(true)
    else onError(errorText(e))
  }), [])

  useEffect(() => {
    const onPop = () => setPath(location.pathname)
    window.addEventListener('popstate', onPop)
    const off = onConnState(setState)
    refresh()
    loadDescribe()
    const host = new LiveStream(() => '/api/events', {
      hello: (f: { pending: { sessionId: string }[] }) => { setWaiting(new Set(f.pending.map((p) => p.sessionId))); refresh() },
      status: (f: { sessionId: string; status: Summary['status'] }) => {
        setSessions((list) => list.map((s) => s.id === f.sessionId ? { ...s, status: f.status } : s))
        if (f.status === 'idle') refresh() // new events: the list's counts (and unseen dots) move
      },
      request: (f: { params: { sessionId: string } }) => setWaiting((w) => new Set(w).add(f.params.sessionId)),
      'request-done': (f: { sessionId: string }) => { setWaiting((w) => { const n = new Set(w); n.delete(f.sessionId); return n }); refresh() },
      'sessions-changed': () => refresh(),
    })
    const poll = setInterval(() => { if (connState() === 'connected') refresh() }, 10_000)
    return () => { window.removeEventListener('popstate', onPop); off(); host.close(); clearInterval(poll) }
  }, [])
  useEffect(() => {
    const s = sessions.find((x) => x.id === current)
    if (s) markSeen(s.id, s.events)
  }, [current, sessions])

  if (unauthorised) {
    return <div class="empty" data-testid="unauthorised">Not signed in: open the URL that <code>dsh web</code> printed (it carries this launch's token).</div>
  }
  return (
    <div class="app">
      <Sidebar sessions={sessions} current={current} waiting={waiting} navigate={navigate} onError={onError} refresh={refresh} openSettings={() => setSettings(true)} />
      <main>
        <ConnectionStatus state={state} />
        {current
          ? <SessionView key={current} id={current} describe={describe} sessions={sessions} onError={onError} />
          : <NewSession describe={describe} sessions={sessions} navigate={navigate} refresh={refresh} />}
      </main>
      {settings && <Settings describe={describe} close={() => setSettings(false)} reloadDescribe={loadDescribe} />}
      {toast && <div class="toast" data-testid="toast" onClick={() => setToast(null)}>{toast}</div>}
    </div>
  )
}

// in-page links (data-link) navigate without a reload
document.addEventListener('click', (e) => {
  const a = (e.target as HTMLElement | null)?.closest?.('a[data-link]') as HTMLAnchorElement | null
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey) return
  e.preventDefault()
  history.pushState(null, '', a.pathname)
  window.dispatchEvent(new PopStateEvent('popstate'))
})
adoptToken()
applyTheme((localStorage.getItem('dsh.theme') as Theme | null) ?? 'system')
render(<App />, document.getElementById('app')!)
