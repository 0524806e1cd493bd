import { createServer, type AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { httpFailure, parseRetryAfter, postSse } from '../src/llm/stream-kit.js'

describe('stream-kit', () => {
  it('reads retry-after as seconds, HTTP date or retry-after-ms', () => {
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(parseRetryAfter(new Headers({ 'retry-after': '2' }), now)).toBe(2000)
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), now)).toBe(30_000)
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }), now)).toBe(0)
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }), now)).toBe(1500)
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined()
    expect(parseRetryAfter(new Headers(), now)).toBeUndefined()
  })

  it('maps statuses to codes and scrubs the key', () => {
    const map = (status: number, body: string) => httpFailure(status, body, new Headers(), 'p', 'sk-KEY-123')
    expect(map(403, '{"error":{"message":"key sk-KEY-123 disabled"}}')).toEqual({
      code: 'AUTH', message: 'provider "p" rejected the credentials (HTTP 403): key <redacted> disabled', retryable: false, provider: 'p', status: 403,
    })
    expect(map(408, '').code).toBe('TIMEOUT')
    expect(map(413, 'Request exceeds the context window').code).toBe('CONTEXT_WINDOW_EXCEEDED')
    expect(map(404, 'model not found')).toMatchObject({ code: 'BAD_REQUEST', message: 'provider "p" rejected the request (HTTP 404): model not found' })
    expect(map(502, '<html>bad gateway</html>')).toMatchObject({ code: 'SERVER', retryable: true })
  })

  it('an https:// URL speaks TLS (node:https, loaded on first use: 0095), an http:// one plain HTTP', async () => {
    const firstBytes: Buffer[] = []
    const server = createServer((socket) => socket.once('data', (d: Buffer) => { firstBytes.push(d); socket.destroy() }))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const { port } = server.address() as AddressInfo
    try {
      for (const scheme of ['https', 'http']) {
        const stream = postSse({ url: `${scheme}://127.0.0.1:${port}/v1/chat`, headers: {}, body: '{}', signal: new AbortController().signal, idleTimeoutMs: 5000, provider: 'p', apiKey: 'k' })
        await expect(stream.next()).rejects.toThrow()
      }
    } finally {
      server.close()
    }
    expect(firstBytes.map((b) => b[0])).toEqual([0x16, 'P'.charCodeAt(0)]) // a TLS handshake record, then "POST"
  })
})
