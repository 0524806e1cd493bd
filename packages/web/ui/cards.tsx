import { useEffect, useState } from 'preact/hooks'
import { hunksOf } from './diffview.js'
import type { Card, ToolItem } from './transcript.js'

const str = (v: unknown): string => typeof v === 'string' ? v : ''
const num = (v: unknown): number | undefined => typeof v === 'number' ? v : undefined

function duration(item: ToolItem, now: number): string {
  const ms = (item.ended ?? now) - item.started
  return ms < 1000 ? `${Math.max(0, Math.round(ms))} ms` : `${(ms / 1000).toFixed(1)} s`
}

/** Ticks once a second while a call runs; stops when the page is offline (`frozen`). */
function useNow(active: boolean): number {
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    if (!active) return
    const t = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(t)
  }, [active])
  return now
}

export function DiffHunks({ path, oldText, newText }: { path: string; oldText: string | null; newText: string }) {
  const hunks = hunksOf(oldText, newText)
  return (
    <div class="diff" data-path={path}>
      <div class="diff-path">{path}{oldText === null ? ' (new file)' : ''}</div>
      {hunks.length === 0 && <div class="muted">no change</div>}
      {hunks.map((h, i) => (
        <table class="hunk" key={i}>
          <thead><tr><td colSpan={3} class="hunk-head">{h.header}</td></tr></thead>
          <tbody>
            {h.lines.map((l, j) => (
              <tr class={`line-${l.kind}`} key={j} data-line-kind={l.kind}>
                <td class="ln">{l.oldNo ?? ''}</td><td class="ln">{l.newNo ?? ''}</td>
                <td class="code"><span class="mark">{l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : ' '}</span>{l.text}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </div>
  )
}

function ExitStatus({ result, status }: { result: Card | null; status: ToolItem['status'] }) {
  if (status === 'interrupted') return <span class="exit bad" data-testid="exit-status">interrupted — outcome unknown</span>
  if (!result) return null
  const code = num(result.exitCode)
  const signal = str(result.signal)
  if (signal) return <span class="exit bad" data-testid="exit-status" data-signal={signal}>killed by {signal}</span>
  if (code !== undefined) return <span class={`exit ${code === 0 ? 'ok' : 'bad'}`} data-testid="exit-status" data-exit-code={String(code)}>exit {code}</span>
  return null
}

function Terminal({ item, now }: { item: ToolItem; now: number }) {
  const call = item.call ?? { card: 'terminal' }
  const args = (item.args ?? {}) as { command?: string }
  const output = item.result && item.status !== 'running' ? str(item.result.output) || item.output : item.output
  return (
    <>
      {str(call.description) && <div class="card-desc">{str(call.description)}</div>}
      <div class="term-cmd"><span class="prompt">$</span> {str(call.title) || args.command || item.tool}</div>
      {str(call.cwd) && <div class="muted small">in {str(call.cwd)}</div>}
      <pre class="term-out" data-testid="terminal-output">{output}</pre>
      <div class="card-foot"><ExitStatus result={item.result} status={item.status} /><span class="muted small">{duration(item, now)}</span></div>
    </>
  )
}

function Body({ item, now }: { item: ToolItem; now: number }) {
  const call = item.call
  const result = item.result
  const kind = call?.card ?? result?.card ?? 'generic'
  if (kind === 'terminal') return <Terminal item={item} now={now} />
  if (kind === 'diff') {
    const diffs = Array.isArray(result?.diffs) && result.diffs.length ? result.diffs as { path: string; oldText: string | null; newText: string }[]
      : call ? [{ path: str(call.path), oldText: call.oldText as string | null, newText: str(call.newText) }] : []
    return <>{diffs.map((d, i) => <DiffHunks key={i} {...d} />)}{result && str(result.text) && item.status === 'failed' && <pre class="tool-text">{str(result.text)}</pre>}</>
  }
  const text = str(result?.text)
  return (
    <>
      {kind === 'search' && call && <div class="muted small">{str(call.query)}{str(call.path) ? ` in ${str(call.path)}` : ''}</div>}
      {kind === 'read' && call && <div class="muted small">{str(call.path)}{num(call.line) ? `:${num(call.line)}` : ''}</div>}
      {text && <details open={item.status === 'failed'}><summary>{kind === 'read' ? 'content' : 'output'} ({text.split('\n').length} lines)</summary><pre class="tool-text">{text}</pre></details>}
    </>
  )
}

export function ToolCard({ item, frozen, childSession }: { item: ToolItem; frozen: boolean; childSession?: string | undefined }) {
  const now = useNow(item.status === 'running' && !frozen)
  const kind = item.call?.card ?? item.result?.card ?? 'generic'
  const cardKind = ['terminal', 'diff', 'read', 'search'].includes(kind) ? kind : 'generic'
  const title = str(item.call?.title) || item.tool
  return (
    <div class={`tool-card card-${cardKind} status-${item.status}`} data-testid="tool-card" data-card={cardKind} data-status={item.status} data-call-id={item.callId}>
      <div class="card-head">
        <span class={`dot ${item.status}`} />
        <span class="tool-name">{item.tool}</span>
        {cardKind !== 'terminal' && <span class="card-title">{title}</span>}
        {item.status === 'running' && <span class="muted small">running… {duration(item, now)}</span>}
        {item.status === 'interrupted' && cardKind !== 'terminal' && <span class="exit bad">interrupted — outcome unknown</span>}
      </div>
      <Body item={item} now={now} />
      {childSession && <a class="small" href={`/s/${childSession}`} data-link>open the subagent session (read-only)</a>}
    </div>
  )
}
