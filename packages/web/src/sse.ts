import type { ServerResponse } from 'node:http'

/**
 * One Server-Sent-Events response. Session events carry `id: <seq>` so the browser's
 * `Last-Event-ID` resumes exactly; every other frame has no id (it does not move the
 * cursor). Frames are JSON on one `data:` line (JSON never contains a raw newline).
 */
export class SseStream {
  closed = false
  private readonly onClose: (() => void)[] = []

  constructor(private readonly res: ServerResponse, headers: Record<string, string>) {
    res.writeHead(200, {
      ...headers,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'Connection': 'keep-alive',
      'X-Accel-Buffering': 'no',
    })
    res.write('retry: 1000\n\n')
    res.on('close', () => this.markClosed())
  }

  send(event: string, data: unknown, id?: number): void {
    if (this.closed) return
    this.res.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  }

  comment(text: string): void {
    if (!this.closed) this.res.write(`: ${text}\n\n`)
  }

  whenClosed(fn: () => void): void {
    if (this.closed) fn()
    else this.onClose.push(fn)
  }

  end(): void {
    if (this.closed) return
    this.res.end()
    this.markClosed()
  }

  private markClosed(): void {
    if (this.closed) return
    this.closed = true
    for (const fn of this.onClose.splice(0)) fn()
  }
}

/** `Last-Event-ID` (or the `after` query parameter): a durable seq, or -1 for "from the start". */
export function parseCursor(header: string | undefined, query: string | null): { ok: true; afterSeq: number } | { ok: false; message: string } {
  const raw = header ?? query
  if (raw === undefined || raw === null || raw === '') return { ok: true, afterSeq: -1 }
  if (!/^(-1|\d{1,15})$/.test(raw.trim())) return { ok: false, message: `Last-Event-ID must be a session event seq (an integer ≥ -1), got ${JSON.stringify(raw.slice(0, 40))}` }
  return { ok: true, afterSeq: Number(raw.trim()) }
}
