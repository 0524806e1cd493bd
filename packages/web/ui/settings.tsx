import { useEffect, useState } from 'preact/hooks'
import { call, errorText } from './api.js'
import type { Describe } from './main.js'

export type Theme = 'system' | 'light' | 'dark'
export function applyTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme
}

/** Keys are write-only: the page shows whether one is configured and where from, never the key. */
export function Settings({ describe, close, reloadDescribe }: { describe: Describe | null; close(): void; reloadDescribe(): void }) {
  const [creds, setCreds] = useState<{ provider: string; configured: boolean; source: string | null; envVar: string }[]>([])
  const [keys, setKeys] = useState<Record<string, string>>({})
  const [settings, setSettings] = useState<{ settings: Record<string, unknown>; revision: string } | null>(null)
  const [ack, setAck] = useState(false)
  const [mode, setMode] = useState('')
  const [message, setMessage] = useState<string | null>(null)
  const [theme, setTheme] = useState<Theme>((localStorage.getItem('dsh.theme') as Theme | null) ?? 'system')
  const load = () => {
    void call('credentials/describe', {}).then((r) => setCreds(r.providers), (e: unknown) => setMessage(errorText(e)))
    void call('settings/read', {}).then((r) => { setSettings(r); setMode(String(r.settings.permissionMode ?? '')) }, (e: unknown) => setMessage(errorText(e)))
  }
  useEffect(load, [])
  const saveKey = (provider: string) => {
    const key = keys[provider]
    if (!key) return
    void call('credentials/set', { provider, key }).then(() => { setKeys({ ...keys, [provider]: '' }); setMessage(`key for ${provider} saved`); load(); reloadDescribe() }, (e: unknown) => setMessage(errorText(e)))
  }
  const update = (set: Record<string, string>) => {
    void call('settings/update', { set, ...(settings ? { expectedRevision: settings.revision } : {}) })
      .then((r) => { setSettings({ settings: r.settings, revision: r.revision }); setMessage('saved'); reloadDescribe() }, (e: unknown) => setMessage(errorText(e)))
  }
  return (
    <div class="modal" data-testid="settings" role="dialog" aria-label="settings" onKeyDown={(e) => { if (e.key === 'Escape') close() }}>
      <div class="modal-body">
        <header><h2>Settings</h2><button onClick={close} data-testid="settings-close">✕</button></header>
        <h3>Provider keys</h3>
        {creds.map((c) => (
          <div class="row" key={c.provider} data-testid="credential" data-provider={c.provider} data-configured={String(c.configured)}>
            <span class="provider">{c.provider}</span>
            <span class="muted small">{c.configured ? `configured (${c.source === 'env' ? c.envVar : 'stored'})` : 'not configured'}</span>
            <input type="password" autocomplete="off" placeholder={c.configured ? 'replace key' : 'paste key'} value={keys[c.provider] ?? ''}
              onInput={(e) => setKeys({ ...keys, [c.provider]: (e.target as HTMLInputElement).value })} data-testid="key-input" />
            <button onClick={() => saveKey(c.provider)} disabled={!keys[c.provider]}>Save</button>
            {c.source === 'store' && <button onClick={() => void call('credentials/unset', { provider: c.provider }).then(load, (e: unknown) => setMessage(errorText(e)))}>Remove</button>}
          </div>
        ))}
        <h3>Defaults</h3>
        <div class="row">
          <label>Model <select value={String(settings?.settings.model ?? describe?.defaults.model ?? '')} onChange={(e) => {
            const [provider, model] = (e.target as HTMLSelectElement).value.split('\u0000')
            update({ provider: provider!, model: model! })
          }}>
            {(describe?.providers ?? []).flatMap((p) => p.models.map((m) => <option key={`${p.id}/${m}`} value={`${p.id}\u0000${m}`}>{p.id}/{m}</option>))}
          </select></label>
        </div>
        <div class="row">
          <label>Permission preset <select data-testid="default-permission" value={mode} onChange={(e) => { setMode((e.target as HTMLSelectElement).value); setAck(false) }}>
            {(describe?.permissionModes ?? []).map((m) => <option key={m.id} value={m.id}>{m.id}</option>)}
          </select></label>
          {mode === 'danger-full-access' && <label class="warn"><input type="checkbox" checked={ack} onChange={(e) => setAck((e.target as HTMLInputElement).checked)} data-testid="danger-ack" /> I understand: no sandbox and no prompts</label>}
          <button disabled={!mode || (mode === 'danger-full-access' && !ack)} onClick={() => update({ permissionMode: mode })}>Save</button>
        </div>
        <h3>Theme</h3>
        <div class="row">
          {(['system', 'light', 'dark'] as const).map((x) => <label key={x}><input type="radio" name="theme" checked={theme === x} onChange={() => { setTheme(x); localStorage.setItem('dsh.theme', x); applyTheme(x) }} /> {x}</label>)}
        </div>
        {message && <div class="muted small" data-testid="settings-message">{message}</div>}
      </div>
    </div>
  )
}
