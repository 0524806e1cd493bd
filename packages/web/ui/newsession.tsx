import { useEffect, useState } from 'preact/hooks'
import { call, errorText, listDir, makeDir, type DirListing } from './api.js'
import type { Describe, Summary } from './main.js'

/** New session: a workspace (recent ones, or a folder browser), agent preset and permission preset. */
export function NewSession({ describe, sessions, navigate, refresh }: { describe: Describe | null; sessions: Summary[]; navigate(p: string): void; refresh(): void }) {
  const [dir, setDir] = useState<DirListing | null>(null)
  const [workspace, setWorkspace] = useState<string>('')
  const [newName, setNewName] = useState('')
  const [preset, setPreset] = useState('')
  const [mode, setMode] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [ack, setAck] = useState(false)
  const browse = (path?: string, keepTyped = false) => void listDir(path).then((d) => {
    setDir(d)
    setWorkspace((typed) => keepTyped && typed ? typed : d.path)
    if (!keepTyped) setError(null)
  }, (e: unknown) => setError(errorText(e)))
  // the first listing (the launch directory) does not overwrite what the user typed meanwhile
  useEffect(() => browse(undefined, true), [])
  const recent = [...new Set(sessions.map((s) => s.workspace))].slice(0, 8)
  const create = async () => {
    setBusy(true)
    try {
      const { session } = await call('session/create', { workspace, ...(preset ? { agentPreset: preset } : {}), ...(mode ? { permissionMode: mode } : {}) })
      refresh()
      navigate(`/s/${session.id}`)
    } catch (e) { setError(errorText(e)) } finally { setBusy(false) }
  }
  return (
    <div class="new-session" data-testid="new-session-form">
      <h2>New session</h2>
      {recent.length > 0 && <div class="recent"><div class="muted small">Recent workspaces</div>
        {recent.map((w) => <button key={w} data-testid="recent-workspace" onClick={() => browse(w)}>{w}</button>)}</div>}
      <label>Workspace <input data-testid="workspace-path" value={workspace} onInput={(e) => setWorkspace((e.target as HTMLInputElement).value)}
        onKeyDown={(e) => { if (e.key === 'Enter') browse(workspace) }} /></label>
      {dir && (
        <div class="browser" data-testid="folder-browser">
          {dir.parent && <button data-testid="folder-up" onClick={() => browse(dir.parent!)}>..</button>}
          {dir.entries.map((e) => <button key={e.path} data-testid="folder" data-path={e.path} onClick={() => browse(e.path)}>{e.name}/</button>)}
          <div class="row">
            <input placeholder="new folder name" data-testid="new-folder-name" value={newName} onInput={(e) => setNewName((e.target as HTMLInputElement).value)} />
            <button disabled={!newName.trim() || newName.includes('/')} onClick={() => void makeDir(`${dir.path.replace(/\/$/, '')}/${newName.trim()}`).then((r) => { setNewName(''); browse(r.path) }, (e: unknown) => setError(errorText(e)))}>Create folder</button>
          </div>
        </div>
      )}
      <div class="row">
        <label>Agent preset <select data-testid="agent-preset" value={preset} onChange={(e) => setPreset((e.target as HTMLSelectElement).value)}>
          <option value="">default{describe?.defaults.agentPreset ? ` (${describe.defaults.agentPreset})` : ''}</option>
          {(describe?.agentPresets ?? []).map((p) => <option key={p.id} value={p.id}>{p.id}</option>)}
        </select></label>
        <label>Permissions <select data-testid="new-permission-mode" value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value)}>
          <option value="">default ({describe?.defaults.permissionMode ?? 'workspace-write'})</option>
          {(describe?.permissionModes ?? []).map((p) => <option key={p.id} value={p.id} title={p.description}>{p.id}</option>)}
        </select></label>
      </div>
      {mode === 'danger-full-access' && <label class="warn"><span><input type="checkbox" checked={ack} onChange={(e) => setAck((e.target as HTMLInputElement).checked)} data-testid="new-danger-ack" /> I understand: no sandbox and no prompts (only in a disposable checkout)</span></label>}
      {error && <div class="error" data-testid="form-error">{error}</div>}
      <button class="primary" data-testid="create-session" disabled={busy || !workspace || (mode === 'danger-full-access' && !ack)} onClick={() => void create()}>Start session in {workspace || '…'}</button>
    </div>
  )
}
