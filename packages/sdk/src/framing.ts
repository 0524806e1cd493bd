/**
 * NDJSON framing shared by the server carrier and the TypeScript client. A frame is the
 * bytes up to a "\n" (0x0A) and nothing else: U+2028/U+2029 inside a JSON string are
 * content, never a break, so `readline` is not used. A trailing "\r" (CRLF peers) is
 * dropped; blank lines are skipped. A frame longer than `maxBytes` is discarded up to
 * its newline and reported once through `onOversize` (the peer keeps being served).
 */
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024

export interface SplitterEvents {
  line(text: string): void
  oversize(bytes: number): void
}

export class LineSplitter {
  private parts: Buffer[] = []
  private size = 0
  private dropping = false

  constructor(private readonly events: SplitterEvents, readonly maxBytes = DEFAULT_MAX_FRAME_BYTES) {}

  push(chunk: Buffer): void {
    let start = 0
    while (start <= chunk.length) {
      const nl = chunk.indexOf(0x0a, start)
      if (nl < 0) {
        this.keep(chunk.subarray(start))
        return
      }
      this.keep(chunk.subarray(start, nl))
      this.flush()
      start = nl + 1
    }
  }

  /** The input ended: a last frame without its newline still counts. */
  end(): void {
    if (this.size > 0 || this.dropping) this.flush()
  }

  private keep(bytes: Buffer): void {
    if (!bytes.length) return
    if (this.dropping) {
      this.size += bytes.length
      return
    }
    this.size += bytes.length
    if (this.size > this.maxBytes) {
      this.dropping = true
      this.parts = []
      return
    }
    this.parts.push(bytes)
  }

  private flush(): void {
    const { dropping, size } = this
    const parts = this.parts
    this.parts = []
    this.size = 0
    this.dropping = false
    if (dropping) return this.events.oversize(size)
    if (!size) return
    let text = (parts.length === 1 ? parts[0]! : Buffer.concat(parts, size)).toString('utf8')
    if (text.endsWith('\r')) text = text.slice(0, -1)
    if (text.trim() === '') return
    this.events.line(text)
  }
}

/** One frame: the JSON text and its newline. JSON.stringify escapes lone surrogates and keeps U+2028 as is. */
export function frame(message: unknown): string {
  return `${JSON.stringify(message)}\n`
}
