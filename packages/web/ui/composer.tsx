import { useState } from 'preact/hooks'

export interface Queued { id: number; text: string }

interface Props {
  running: boolean
  disabled: boolean
  queue: Queued[]
  onSend(text: string): void
  onQueue(text: string): void
  onSteer(item: Queued): void
  onEdit(item: Queued, text: string): void
  onRemove(item: Queued): void
  onStop(): void
}

/** Enter sends (queues while a turn runs), Shift+Enter is a newline, Esc stops the turn. */
export function Composer(p: Props) {
  const [text, setText] = useState('')
  const submit = () => {
    const t = text.trim()
    if (!t || p.disabled) return
    if (p.running) p.onQueue(t)
    else p.onSend(t)
    setText('')
  }
  return (
    <div class="composer">
      {p.queue.length > 0 && (
        <ul class="queue" data-testid="queue">
          {p.queue.map((q) => (
            <li key={q.id} data-testid="queued-message">
              <input value={q.text} onInput={(e) => p.onEdit(q, (e.target as HTMLInputElement).value)} aria-label="queued message" />
              <button onClick={() => p.onSteer(q)} title="send into the running turn now">steer</button>
              <button onClick={() => p.onRemove(q)} title="remove">✕</button>
            </li>
          ))}
        </ul>
      )}
      <div class="composer-row">
        <textarea data-testid="composer" rows={3} value={text} disabled={p.disabled}
          placeholder={p.running ? 'A turn is running: Enter queues this message' : 'Message dsh (Enter sends, Shift+Enter for a newline)'}
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); submit() }
            else if (e.key === 'Escape' && p.running) { e.preventDefault(); p.onStop() }
          }} />
        <div class="composer-buttons">
          {p.running && <button data-testid="stop" class="danger" onClick={p.onStop} title="Esc">Stop</button>}
          <button data-testid="send" class="primary" disabled={p.disabled || !text.trim()} onClick={submit}>{p.running ? 'Queue' : 'Send'}</button>
        </div>
      </div>
    </div>
  )
}
