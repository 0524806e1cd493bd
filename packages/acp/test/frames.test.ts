import { describe, expect, it } from 'vitest'
import { boundedNdJsonStream, clipError, headId } from '../src/frames.js'
import { quote } from '../src/quote.js'

/** Feeds `chunks` (strings) to a bounded stream; returns what it delivered and what it answered by itself. */
async function run(chunks: (string | Uint8Array)[], maxFrameBytes?: number) {
  const encoder = new TextEncoder()
  const input = new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk)
      c.close()
    },
  })
  const written: string[] = []
  const output = new WritableStream<Uint8Array>({ write: (b) => { written.push(new TextDecoder().decode(b)) } })
  const refused: [number, unknown][] = []
  const stream = boundedNdJsonStream(output, input, { ...(maxFrameBytes ? { maxFrameBytes } : {}), onOversize: (bytes, id) => refused.push([bytes, id]) })
  const delivered: unknown[] = []
  const reader = stream.readable.getReader()
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    delivered.push(value)
  }
  const answers = written.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: unknown; error: { code: number; message: string } })
  return { delivered, answers, refused }
}

describe('bounded NDJSON frames', () => {
  it('splits frames across and within chunks; a last line without a newline is delivered', async () => {
    const { delivered, answers } = await run(['{"jsonrpc":"2.0","id":1,"me', 'thod":"a"}\n{"jsonrpc":"2.0","method":"b"}\n\n', '{"jsonrpc":"2.0","id":2,"method":"c"}'])
    expect(delivered).toEqual([{ jsonrpc: '2.0', id: 1, method: 'a' }, { jsonrpc: '2.0', method: 'b' }, { jsonrpc: '2.0', id: 2, method: 'c' }])
    expect(answers).toEqual([])
  })

  it('answers what is not a JSON-RPC object itself: -32700 for bad JSON, -32600 for arrays and scalars, id null', async () => {
    const { delivered, answers } = await run(['{nope\n[1,2]\n42\n{"jsonrpc":"2.0","id":3,"method":"ok"}\n'])
    expect(answers.map((a) => [a.id, a.error.code])).toEqual([[null, -32700], [null, -32600], [null, -32600]])
    expect(delivered).toEqual([{ jsonrpc: '2.0', id: 3, method: 'ok' }])
  })

  it('a frame over the limit is discarded as it streams and answered with its id; the next frame goes through', async () => {
    const big = `{"jsonrpc":"2.0","id":"req-9","method":"session/new","params":{"cwd":"${'x'.repeat(5000)}"}}`
    const { delivered, answers, refused } = await run([big.slice(0, 1500), big.slice(1500), '\n{"jsonrpc":"2.0","id":10,"method":"after"}\n'], 1024)
    expect(answers).toEqual([{ jsonrpc: '2.0', id: 'req-9', error: { code: -32600, message: `Invalid Request: a frame of ${big.length} bytes exceeds the 1024-byte limit and was discarded` } }])
    expect(refused).toEqual([[big.length, 'req-9']])
    expect(delivered).toEqual([{ jsonrpc: '2.0', id: 10, method: 'after' }])
  })

  it('an oversized last frame (no newline before EOF) is answered too', async () => {
    const { answers } = await run([`{"id":5,"x":"${'y'.repeat(2000)}`], 1024)
    expect(answers.map((a) => [a.id, a.error.code])).toEqual([[5, -32600]])
  })

  it('a failing input is reported once and ends the stream with its error (the transport cannot recover)', async () => {
    let pulls = 0
    const input = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pulls++ === 0) c.enqueue(new TextEncoder().encode('{"jsonrpc":"2.0","method":"first"}\n'))
        else c.error(new Error('EIO: stdin broke'))
      },
    })
    const seen: unknown[] = []
    const stream = boundedNdJsonStream(new WritableStream(), input, { onInputError: (e) => seen.push((e as Error).message) })
    const reader = stream.readable.getReader()
    expect(await reader.read()).toEqual({ done: false, value: { jsonrpc: '2.0', method: 'first' } })
    await expect(reader.read()).rejects.toThrow('EIO: stdin broke')
    expect(seen).toEqual(['EIO: stdin broke'])
  })

  it('finds only the top-level id in a frame head', () => {
    expect(headId('{"jsonrpc":"2.0","id":42,"method":"x"')).toBe(42)
    expect(headId('{"params":{"id":7},"method":"id","id":"a\\"b"')).toBe('a"b')
    expect(headId('{"method":"session/cancel","params":{"sessionId":"s","id":1')).toBeNull()
    expect(headId('{"id":{"nested":1}}')).toBeNull()
    expect(headId('not json at all')).toBeNull()
  })

  it('clips long strings in error responses only', () => {
    const long = 'z'.repeat(10_000)
    const clipped = clipError({ jsonrpc: '2.0', id: 1, error: { code: -32602, message: long, data: { cwd: long, list: [long] } } }) as { error: { message: string; data: { cwd: string; list: string[] } } }
    expect(JSON.stringify(clipped).length).toBeLessThan(2500)
    expect(clipped.error.message).toMatch(/^z{512}… \(10000 characters\)$/)
    const result = { jsonrpc: '2.0', id: 1, result: { text: long } }
    expect(clipError(result)).toBe(result)
  })

  it('quotes a short prefix of bad input', () => {
    expect(quote('rel/path')).toBe('"rel/path"')
    expect(quote(5)).toBe('5')
    expect(quote('x'.repeat(8_000_000))).toBe(`"${'x'.repeat(79)}… (8000002 characters)`)
  })
})
