import { closeSync, openSync, writeSync } from 'node:fs'
import type { Truncation } from './render.js'
import { binaryNote, outputText } from './text.js'

export interface SinkLimits {
  maxBytes: number
  maxLines: number
  /** The spill file stops growing here (a note at its end says so); default 256 MiB. */
  maxSpillBytes?: number
}

export const DEFAULT_MAX_SPILL_BYTES = 256 * 1024 * 1024

const NL = 0x0a

function countLines(buf: Uint8Array): number {
  let n = 0
  for (let i = buf.indexOf(NL); i !== -1; i = buf.indexOf(NL, i + 1)) n++
  return n
}

/** Decodes a byte tail that may start inside a UTF-8 sequence. */
function decodeTail(buf: Buffer): string {
  let start = 0
  while (start < buf.length && start < 3 && (buf[start]! & 0xc0) === 0x80) start++
  return buf.subarray(start).toString('utf8')
}

/** The last `size` bytes written, in one buffer allocated once. */
class Ring {
  private readonly buf: Buffer
  private pos = 0
  private full = false
  constructor(private readonly size: number) {
    this.buf = Buffer.allocUnsafe(size)
  }

  write(chunk: Uint8Array): void {
    const n = this.size
    if (chunk.length >= n) {
      this.buf.set(chunk.subarray(chunk.length - n))
      this.pos = 0
      this.full = true
      return
    }
    const first = Math.min(n - this.pos, chunk.length)
    this.buf.set(chunk.subarray(0, first), this.pos)
    if (first < chunk.length) {
      this.buf.set(chunk.subarray(first), 0)
      this.pos = chunk.length - first
      this.full = true
    } else {
      this.pos += first
      if (this.pos === n) [this.pos, this.full] = [0, true]
    }
  }

  contents(): Buffer {
    return this.full ? Buffer.concat([this.buf.subarray(this.pos), this.buf.subarray(0, this.pos)]) : Buffer.from(this.buf.subarray(0, this.pos))
  }
}

/**
 * Collects a stream with bounded memory: everything while it fits in `maxBytes`, then
 * the stream goes to a 0600 spill file (created lazily at `spillPath()`) and only its last
 * maxBytes stay in memory, in one buffer (nothing is allocated per chunk). `write` copies
 * what it keeps, so a chunk may be a reused buffer. `finish()` returns the tail (at most
 * maxBytes and maxLines, starting at a line boundary when it was cut) and, when
 * anything was cut, where the whole stream is.
 */
export class OutputSink {
  private head: Buffer[] = []
  private tail: Ring | undefined
  private fd: number | undefined
  private path: string | undefined
  private lastByte = -1
  private spilledBytes = 0
  totalBytes = 0
  newlines = 0

  constructor(private readonly limits: SinkLimits, private readonly spillPath: () => string) {}

  get spilled(): string | undefined {
    return this.path
  }

  /** A spill failure (disk full, …) stops spilling, never the command; the note says so. */
  private spillWrite(chunk: Buffer): void {
    if (this.fd === undefined) return
    const cap = this.limits.maxSpillBytes ?? DEFAULT_MAX_SPILL_BYTES
    try {
      const room = cap - this.spilledBytes
      writeSync(this.fd, room >= chunk.length ? chunk : chunk.subarray(0, room))
      this.spilledBytes += Math.min(room, chunk.length)
      if (room <= chunk.length) {
        // a runaway command must not fill the disk: keep the first `cap` bytes and say so
        writeSync(this.fd, `\n[dsh: output file capped at ${cap} bytes; the rest was not saved]\n`)
        this.close()
      }
    } catch (error) {
      this.close()
      this.path = `(not saved: ${(error as Error).message})`
    }
  }

  private openSpill(): void {
    if (this.path !== undefined) return
    this.path = this.spillPath()
    try {
      this.fd = openSync(this.path, 'wx', 0o600)
    } catch (error) {
      this.path = `(not saved: ${(error as Error).message})`
    }
    this.tail = new Ring(this.limits.maxBytes)
    for (const chunk of this.head) {
      this.spillWrite(chunk)
      this.tail.write(chunk)
    }
    this.head = []
  }

  write(chunk: Buffer): void {
    if (chunk.length === 0) return
    this.totalBytes += chunk.length
    this.newlines += countLines(chunk)
    this.lastByte = chunk[chunk.length - 1]!
    if (this.path === undefined) {
      this.head.push(Buffer.from(chunk))
      if (this.totalBytes > this.limits.maxBytes) this.openSpill()
      return
    }
    this.spillWrite(chunk)
    this.tail!.write(chunk)
  }

  get totalLines(): number {
    return this.newlines + (this.totalBytes > 0 && this.lastByte !== NL ? 1 : 0)
  }

  /** Closes the spill file. Idempotent. */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }

  finish(): { output: string; truncation?: Truncation } {
    const cutByLines = this.totalLines > this.limits.maxLines
    if (cutByLines) this.openSpill()
    const all = this.tail ? this.tail.contents() : Buffer.concat(this.head)
    this.close()
    if (!this.path) return { output: outputText(all) }
    let buf = all.length > this.limits.maxBytes ? all.subarray(all.length - this.limits.maxBytes) : all
    if (buf.length < this.totalBytes) {
      // Start at a line boundary unless the tail is one long line.
      const nl = buf.indexOf(NL)
      if (nl !== -1 && nl < buf.length - 1) buf = buf.subarray(nl + 1)
    }
    const binary = binaryNote(buf, true)
    // not text: one line, the whole stream is in the spill file
    if (binary) return { output: binary, truncation: { spillPath: this.path, totalBytes: this.totalBytes, totalLines: this.totalLines, shownLines: 1 } }
    let text = decodeTail(buf)
    const lines = text.split('\n')
    const trailing = lines.at(-1) === '' ? 1 : 0
    if (lines.length - trailing > this.limits.maxLines) {
      text = lines.slice(lines.length - trailing - this.limits.maxLines).join('\n')
    }
    const shownLines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
    return {
      output: text,
      truncation: { spillPath: this.path, totalBytes: this.totalBytes, totalLines: this.totalLines, shownLines },
    }
  }
}

/**
 * Unread output of a background job: at most `maxBytes` are kept; older unread bytes
 * are dropped (and counted) — the spill file has everything.
 */
export class UnreadBuffer {
  private chunks: Buffer[] = []
  private bytes = 0
  dropped = 0

  constructor(private readonly maxBytes: number) {}

  /** Copies what it keeps (a chunk may be a reused buffer). */
  write(chunk: Buffer): void {
    this.chunks.push(Buffer.from(chunk))
    this.bytes += chunk.length
    if (this.bytes > 2 * this.maxBytes) {
      const joined = Buffer.concat(this.chunks)
      const cut = joined.length - this.maxBytes
      this.dropped += cut
      this.chunks = [Buffer.from(joined.subarray(cut))]
      this.bytes = this.maxBytes
    }
  }

  /** Everything unread (capped), and how many bytes were dropped since the last read. */
  take(): { text: string; dropped: number } {
    let joined = Buffer.concat(this.chunks)
    let dropped = this.dropped
    if (joined.length > this.maxBytes) {
      dropped += joined.length - this.maxBytes
      joined = joined.subarray(joined.length - this.maxBytes)
    }
    this.chunks = []
    this.bytes = 0
    this.dropped = 0
    return { text: binaryNote(joined, dropped > 0) ?? (dropped > 0 ? decodeTail(joined) : joined.toString('utf8')), dropped }
  }
}
