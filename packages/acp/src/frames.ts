import type * as acp from '@agentclientprotocol/sdk/unstable'

/** The SDK's own frame limit (ndJsonStream's default): a frame above it is refused, never buffered whole. */
export const MAX_FRAME_BYTES = 32 * 1024 * 1024

/** How much of a refused frame is kept to find its request id. */
const HEAD_BYTES = 4096

/** Strings longer than this in an outgoing error (message or data) are cut: errors never echo bulk input. */
export const MAX_ERROR_STRING = 512

const NEWLINE = 0x0a

/** Input is not read while more than this much output waits for the peer to read it. */
const OUTPUT_HIGH_WATER = 4 * 1024 * 1024

export interface FrameOptions {
  maxFrameBytes?: number
  /** Told about each refused frame (for a stderr line). */
  onOversize?: (bytes: number, id: acp.JsonRpcId | null) => void
  /** Told when the input itself fails (the connection then ends: the transport cannot recover). */
  onInputError?: (error: unknown) => void
}

type ErrorFrame = { jsonrpc: '2.0'; id: acp.JsonRpcId | null; error: { code: number; message: string; data?: unknown } }

const errorFrame = (id: acp.JsonRpcId | null, code: number, message: string): ErrorFrame => ({ jsonrpc: '2.0', id, error: { code, message } })

/**
 * NDJSON JSON-RPC over a byte stream pair, like the SDK's `ndJsonStream` with three
 * differences. A frame over `maxFrameBytes` is discarded while it streams in (only its
 * first bytes are kept) and answered with -32600 carrying the request id when its head
 * names one (else `id: null`); the connection goes on. Input is read only as fast as
 * the connection takes frames (pull-based) and not while much output is unread, so a
 * storm is not buffered whole. Error
 * responses are clipped (`clipError`). Lines split on "\n" only; blank lines are
 * skipped; a line that is not JSON gets -32700, an array or a non-object -32600
 * (`id: null`), as the SDK does.
 */
export function boundedNdJsonStream(output: WritableStream<Uint8Array>, input: ReadableStream<Uint8Array>, options: FrameOptions = {}): acp.Stream {
  const max = options.maxFrameBytes ?? MAX_FRAME_BYTES
  const encoder = new TextEncoder()
  const decoder = new TextDecoder()
  let writing: Promise<void> = Promise.resolve()
  let queued = 0
  const write = (message: unknown): Promise<void> => {
    const bytes = encoder.encode(`${JSON.stringify(clipError(message))}\n`)
    queued += bytes.length
    const next = writing.then(async () => {
      const writer = output.getWriter()
      try {
        await writer.write(bytes)
      } finally {
        writer.releaseLock()
        queued -= bytes.length
      }
    })
    writing = next.catch(() => undefined)
    return next
  }

  const reader = input.getReader()
  let parts: Uint8Array[] = []
  let size = 0
  /** While discarding an oversized frame: its first bytes and its length so far. */
  let refused: { head: Uint8Array; bytes: number } | undefined
  let ended = false

  const take = (): Uint8Array => {
    const line = parts.length === 1 ? parts[0]! : concat(parts, size)
    parts = []
    size = 0
    return line
  }
  /** A complete line → a message to deliver, or undefined (answered or skipped here). */
  const finish = async (line: Uint8Array): Promise<acp.AnyMessage | undefined> => {
    const text = decoder.decode(line).trim()
    if (!text) return undefined
    let message: unknown
    try {
      message = JSON.parse(text)
    } catch {
      await write(errorFrame(null, -32700, 'Parse error'))
      return undefined
    }
    if (Array.isArray(message)) {
      await write(errorFrame(null, -32600, 'Invalid Request: JSON-RPC batches are not supported'))
      return undefined
    }
    if (!message || typeof message !== 'object') {
      await write(errorFrame(null, -32600, 'Invalid Request: a frame must be a JSON object'))
      return undefined
    }
    return message as acp.AnyMessage
  }
  const refuse = async (): Promise<void> => {
    const { head, bytes } = refused!
    refused = undefined
    const id = headId(decoder.decode(head))
    options.onOversize?.(bytes, id)
    await write(errorFrame(id, -32600, `Invalid Request: a frame of ${bytes} bytes exceeds the ${max}-byte limit and was discarded`))
  }
  /** Consumes `chunk` from `start`; returns the messages it completed and where it stopped. */
  const feed = async (chunk: Uint8Array, out: acp.AnyMessage[]): Promise<void> => {
    let start = 0
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start)
      const end = nl < 0 ? chunk.length : nl
      const piece = chunk.subarray(start, end)
      if (refused) {
        refused.bytes += piece.length
      } else if (size + piece.length > max) {
        const head = concat([...parts, piece], Math.min(HEAD_BYTES, size + piece.length), HEAD_BYTES)
        refused = { head, bytes: size + piece.length }
        parts = []
        size = 0
      } else if (piece.length) {
        // copy: the chunk's buffer may be reused by the source
        parts.push(nl < 0 ? piece.slice() : piece)
        size += piece.length
      }
      if (nl < 0) return
      start = nl + 1
      if (refused) {
        await refuse()
      } else {
        const message = await finish(take())
        if (message) out.push(message)
      }
    }
  }

  const pending: acp.AnyMessage[] = []
  const readable = new ReadableStream<acp.AnyMessage>({
    async pull(controller) {
      while (queued > OUTPUT_HIGH_WATER) await writing
      while (!pending.length && !ended) {
        let next: Awaited<ReturnType<typeof reader.read>>
        try {
          next = await reader.read()
        } catch (error) {
          ended = true
          options.onInputError?.(error)
          throw error
        }
        const { value, done } = next
        if (done) {
          ended = true
          if (refused) await refuse()
          else if (size) {
            const message = await finish(take())
            if (message) pending.push(message)
          }
          break
        }
        if (value) await feed(value, pending)
      }
      if (pending.length) controller.enqueue(pending.shift()!)
      else if (ended) controller.close()
    },
    cancel(reason) {
      ended = true
      parts = []
      return reader.cancel(reason)
    },
  }, { highWaterMark: 0 })
  const writable = new WritableStream<acp.AnyMessage>({ write: (message) => write(message) })
  return { readable, writable }
}

function concat(parts: readonly Uint8Array[], size: number, limit = size): Uint8Array {
  const out = new Uint8Array(Math.min(size, limit))
  let at = 0
  for (const part of parts) {
    if (at >= out.length) break
    const piece = part.subarray(0, out.length - at)
    out.set(piece, at)
    at += piece.length
  }
  return out
}

/**
 * The top-level `"id"` of a JSON object's first bytes (a number, or a string of at most
 * 256 characters), or null: a cut frame still gets its answer where it can be matched.
 */
export function headId(head: string): acp.JsonRpcId | null {
  let depth = 0
  for (let i = 0; i < head.length; i++) {
    const c = head[i]
    if (c === '"') {
      const end = stringEnd(head, i)
      if (end < 0) return null
      if (depth === 1 && head.slice(i, end + 1) === '"id"') {
        const value = /^\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.){0,256}")/.exec(head.slice(end + 1))
        if (value) {
          try {
            const id = JSON.parse(value[1]!) as unknown
            if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) return id
          } catch {
            return null
          }
        }
      }
      i = end
    } else if (c === '{' || c === '[') {
      depth++
    } else if (c === '}' || c === ']') {
      depth--
    }
  }
  return null
}

function stringEnd(text: string, quote: number): number {
  for (let i = quote + 1; i < text.length; i++) {
    if (text[i] === '\\') i++
    else if (text[i] === '"') return i
  }
  return -1
}

function clipValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return value.length > MAX_ERROR_STRING ? `${value.slice(0, MAX_ERROR_STRING)}… (${value.length} characters)` : value
  if (!value || typeof value !== 'object' || depth > 6) return value
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => clipValue(v, depth + 1))
  return Object.fromEntries(Object.entries(value).slice(0, 50).map(([k, v]) => [k, clipValue(v, depth + 1)]))
}

/** An error response with every long string cut (message and data); any other frame unchanged. */
export function clipError(message: unknown): unknown {
  if (!message || typeof message !== 'object' || !('error' in message) || 'method' in message) return message
  const frame = message as { error: unknown }
  return { ...frame, error: clipValue(frame.error, 0) }
}
