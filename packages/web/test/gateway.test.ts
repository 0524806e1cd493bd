import { mkdtempSync, mkdirSync, writeFileSync, existsSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { brotliCompressSync } from 'node:zlib'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseWebArgs } from '../src/args.js'
import { startWebServer, type WebServer } from '../src/server.js'
import { fakeHost } from './fake-host.js'
import { openSse, send } from './http.js'

const TOKEN = 'a'.repeat(64)
let server: WebServer
let host: ReturnType<typeof fakeHost>
let assets: string
let port: number
const auth = () => ({ Authorization: `Bearer ${TOKEN}` })
const json = (extra: Record<string, string> = {}) => ({ ...auth(), 'Content-Type': 'application/json', ...extra })

function makeAssets(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-web-assets-'))
  mkdirSync(join(dir, 'assets'))
  writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="/assets/app-X.js"></script>')
  writeFileSync(join(dir, 'assets/app-X.js'), 'console.log(1)')
  writeFileSync(join(dir, 'assets/app-X.js.br'), brotliCompressSync('console.log(1)'))
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ files: ['assets/app-X.js'] }))
  return dir
}

beforeEach(async () => {
  host = fakeHost()
  assets = makeAssets()
  server = await startWebServer({ args: { port: 0, host: '127.0.0.1', open: false }, connect: (c) => host.connect(c), assetsDir: assets, env: {}, token: TOKEN, cwd: tmpdir() })
  port = server.port
})
afterEach(async () => {
  await server.close()
})

describe('launcher flags', () => {
  it('refuses a non-loopback --host, a bad --port and unknown flags, naming what was wrong', () => {
    expect(parseWebArgs(['--host', '0.0.0.0'])).toMatchObject({ type: 'error', message: expect.stringContaining('loopback') })
    expect(parseWebArgs(['--host', 'example.com'])).toMatchObject({ type: 'error', message: expect.stringContaining('"example.com"') })
    expect(parseWebArgs(['--port', 'x'])).toMatchObject({ type: 'error', message: expect.stringContaining('--port') })
    expect(parseWebArgs(['--port', '70000'])).toMatchObject({ type: 'error' })
    expect(parseWebArgs(['--bogus'])).toMatchObject({ type: 'error', message: expect.stringContaining('--bogus') })
    expect(parseWebArgs(['--port', '0', '--host', '::1', '--no-open'])).toEqual({ type: 'run', args: { port: 0, host: '::1', open: false } })
    expect(parseWebArgs([])).toEqual({ type: 'run', args: { port: 3080, host: '127.0.0.1', open: true } })
  })

  it('reports a port already in use with a clear error', async () => {
    await expect(startWebServer({ args: { port, host: '127.0.0.1', open: false }, connect: (c) => fakeHost().connect(c), assetsDir: assets, env: {}, cwd: tmpdir() }))
      .rejects.toMatchObject({ code: 'PORT_IN_USE', message: expect.stringContaining(String(port)) })
  })
})

describe('the token', () => {
  it('is checked, then handed to the page in the fragment (never a cookie: cookies reach every port of 127.0.0.1)', async () => {
    const r = await send(port, 'GET', `/?token=${TOKEN}`)
    expect(r.status).toBe(303)
    expect(r.headers.location).toBe(`/#token=${TOKEN}`)
    expect(r.headers['set-cookie']).toBeUndefined()
    const bearer = await send(port, 'POST', '/api/credentials/describe', json(), '{}')
    expect(bearer.status).toBe(200)
    const stream = openSse(port, `/api/events?token=${TOKEN}`)
    expect(await stream.opened).toBe(200)
    stream.close()
  })

  it('a wrong token is 401 and hands out nothing', async () => {
    const r = await send(port, 'GET', `/?token=${'b'.repeat(64)}`)
    expect(r.status).toBe(401)
    expect(r.headers['set-cookie']).toBeUndefined()
    expect(r.headers.location).toBeUndefined()
  })

  it('the token as a query parameter opens only the event stream, never a method', async () => {
    const call = await send(port, 'POST', `/api/session/create?token=${TOKEN}`, { 'Content-Type': 'application/json' }, JSON.stringify({ workspace: '/tmp' }))
    expect(call.status).toBe(401)
    expect(host.calls).toEqual([])
  })

  it.each([
    ['no token', {}],
    ['a wrong bearer', { Authorization: `Bearer ${'b'.repeat(64)}` }],
    ['the token as a cookie', { Cookie: `dsh_web_${0}=${TOKEN}; token=${TOKEN}` }],
  ])('every /api request and stream without it is 401 (%s), and the host is never called', async (_name, headers) => {
    const call = await send(port, 'POST', '/api/session/create', { 'Content-Type': 'application/json', ...headers }, JSON.stringify({ workspace: '/tmp' }))
    expect(call.status).toBe(401)
    expect(call.json.error.data.code).toBe('UNAUTHORIZED')
    const events = await send(port, 'GET', '/api/events?session=s1', headers)
    expect(events.status).toBe(401)
    expect(host.calls).toEqual([])
  })
})

describe('the site fence', () => {
  it.each(['evil.example', `evil.example:${0}`, 'localhost:1', '127.0.0.1'])('a foreign Host %s is 403, for static files too', async (h) => {
    for (const path of ['/', '/assets/app-X.js', '/api/session/list']) {
      const post = path.startsWith('/api')
      const r = await send(port, post ? 'POST' : 'GET', path, { ...json(), Host: h }, post ? '{}' : undefined)
      expect(r.status).toBe(403)
    }
    expect(host.calls).toEqual([])
  })

  it('accepts the loopback names with this port', async () => {
    for (const h of [`127.0.0.1:${port}`, `localhost:${port}`]) expect((await send(port, 'GET', '/', { Host: h })).status).toBe(200)
  })

  it('a present foreign Origin, or Sec-Fetch-Site: cross-site, is 403; the same origin passes', async () => {
    expect((await send(port, 'POST', '/api/session/list', json({ Origin: 'http://evil.example' }), '{}')).status).toBe(403)
    expect((await send(port, 'POST', '/api/session/list', json({ Origin: 'null' }), '{}')).status).toBe(403)
    expect((await send(port, 'POST', '/api/session/list', json({ Origin: `http://127.0.0.1:${port + 1}` }), '{}')).status).toBe(403)
    expect((await send(port, 'POST', '/api/session/list', json({ 'Sec-Fetch-Site': 'cross-site' }), '{}')).status).toBe(403)
    expect(host.calls).toEqual([])
    expect((await send(port, 'POST', '/api/session/list', json({ Origin: `http://127.0.0.1:${port}`, 'Sec-Fetch-Site': 'same-origin' }), '{}')).status).toBe(200)
  })

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', ''])('a POST with Content-Type %j is 415 and creates nothing', async (type) => {
    const headers: Record<string, string> = { ...auth(), ...(type ? { 'Content-Type': type } : {}) }
    const r = await send(port, 'POST', '/api/session/create', headers, JSON.stringify({ workspace: '/tmp' }))
    expect(r.status).toBe(415)
    expect(host.calls).toEqual([])
  })

  it('sends CSP, nosniff, no-referrer everywhere and no-store on /api; the page has no inline script', async () => {
    const page = await send(port, 'GET', '/')
    const api = await send(port, 'POST', '/api/session/list', json(), '{}')
    for (const r of [page, api]) {
      expect(r.headers['content-security-policy']).toMatch(/^default-src 'self'/)
      expect(r.headers['content-security-policy']).not.toContain('unsafe-inline')
      expect(r.headers['x-content-type-options']).toBe('nosniff')
      expect(r.headers['referrer-policy']).toBe('no-referrer')
    }
    expect(api.headers['cache-control']).toBe('no-store')
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
  })

  it('loading the page and its assets calls nothing on the host', async () => {
    await send(port, 'GET', `/?token=${TOKEN}`)
    await send(port, 'GET', '/')
    await send(port, 'GET', '/s/s1')
    await send(port, 'GET', '/assets/app-X.js')
    expect(host.calls).toEqual([])
  })

  it('serves hashed assets compressed with a long-lived cache, index.html revalidated', async () => {
    const js = await send(port, 'GET', '/assets/app-X.js', { 'Accept-Encoding': 'gzip, br' })
    expect(js.headers['content-encoding']).toBe('br')
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect((await send(port, 'GET', '/')).headers['cache-control']).toBe('no-cache')
    expect((await send(port, 'GET', '/assets/missing.js')).status).toBe(404)
  })
})

describe('calls', () => {
  it('answers {result} for a table method', async () => {
    const r = await send(port, 'POST', '/api/credentials/describe', json(), '{}')
    expect(r.status).toBe(200)
    expect(r.json).toEqual({ result: { providers: [expect.objectContaining({ provider: 'deepseek', configured: true })] } })
  })

  it('an unknown method is 404 -32601 and never reaches the host', async () => {
    const r = await send(port, 'POST', '/api/session/explode', json(), '{}')
    expect(r.status).toBe(404)
    expect(r.json.error.code).toBe(-32601)
    expect(r.json.error.message).toContain('session/explode')
    expect((await send(port, 'POST', '/api/initialize', json(), '{}')).json.error.code).toBe(-32601)
    expect(host.calls).toEqual([])
  })

  it('invalid params are 400 -32602 naming each field; bad JSON is -32700; a non-object is -32602', async () => {
    const r = await send(port, 'POST', '/api/session/create', json(), JSON.stringify({ workspace: 'relative/dir', bogus: 1 }))
    expect(r.status).toBe(400)
    expect(r.json.error.code).toBe(-32602)
    expect(r.json.error.data.issues.map((i: { path: string }) => i.path)).toEqual(expect.arrayContaining(['params.workspace']))
    const bad = await send(port, 'POST', '/api/session/list', json(), '{"x":')
    expect([bad.status, bad.json.error.code]).toEqual([400, -32700])
    const arr = await send(port, 'POST', '/api/session/list', json(), '[1]')
    expect([arr.status, arr.json.error.code]).toEqual([400, -32602])
    expect(JSON.stringify([r.json, bad.json, arr.json])).not.toMatch(/\n\s+at /)
  })

  it('a GET on a method is 405; a body over the limit is 413', async () => {
    expect((await send(port, 'GET', '/api/session/list', auth())).status).toBe(405)
    const big = await send(port, 'POST', '/api/session/list', json(), Buffer.alloc(17 * 1024 * 1024, 32))
    expect(big.status).toBe(413)
  })

  it('lists and creates directories; a missing path or a file is a clear error', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dsh-web-fs-'))
    mkdirSync(join(root, 'b'))
    mkdirSync(join(root, 'a'))
    writeFileSync(join(root, 'file.txt'), 'x')
    const list = await send(port, 'POST', '/api/fs/list', json(), JSON.stringify({ path: root }))
    expect(list.json.result).toEqual({ path: root, parent: tmpdir(), entries: [{ name: 'a', path: join(root, 'a') }, { name: 'b', path: join(root, 'b') }] })
    const missing = await send(port, 'POST', '/api/fs/list', json(), JSON.stringify({ path: join(root, 'nope') }))
    expect(missing.json.error).toMatchObject({ data: { code: 'WORKSPACE_INVALID' }, message: expect.stringContaining('does not exist') })
    const file = await send(port, 'POST', '/api/fs/list', json(), JSON.stringify({ path: join(root, 'file.txt') }))
    expect(file.json.error.message).toContain('is not a directory')
    const rel = await send(port, 'POST', '/api/fs/list', json(), JSON.stringify({ path: 'rel' }))
    expect(rel.json.error.code).toBe(-32602)
    const made = await send(port, 'POST', '/api/fs/mkdir', json(), JSON.stringify({ path: join(root, 'new/deep') }))
    expect(made.json.result).toEqual({ path: join(root, 'new/deep') })
    expect(statSync(join(root, 'new/deep')).isDirectory()).toBe(true)
    const onFile = await send(port, 'POST', '/api/fs/mkdir', json(), JSON.stringify({ path: join(root, 'file.txt') }))
    expect(onFile.json.error.message).toContain('is not a directory')
    expect(existsSync(join(root, 'nope'))).toBe(false)
  })
})

describe('event streams', () => {
  it('resumes exactly after Last-Event-ID, then continues live with no duplicate', async () => {
    const s = openSse(port, '/api/events?session=s1', { ...auth(), 'Last-Event-ID': '2' })
    expect(await s.opened).toBe(200)
    await s.next((f) => f.event === 'ready')
    host.append('live one')
    await s.next((f) => f.id === '6')
    const ids = s.frames.filter((f) => f.event === 'event').map((f) => f.id)
    expect(ids).toEqual(['3', '4', '5', '6'])
    expect(s.frames.find((f) => f.id === '6')!.data.event.data.message).toBe('live one')
    s.close()
  })

  it('replays the whole log without a cursor; an event appended during the replay arrives once', async () => {
    const s = openSse(port, '/api/events?session=s1', auth())
    host.append('during replay')
    await s.next((f) => f.event === 'ready')
    await s.next((f) => f.id === '6')
    expect(s.frames.filter((f) => f.event === 'event').map((f) => Number(f.id))).toEqual([0, 1, 2, 3, 4, 5, 6])
    s.close()
  })

  it.each([['beyond the end', '99', 'CURSOR_BEYOND_END'], ['not a number', 'abc', 'BAD_CURSOR'], ['negative', '-5', 'BAD_CURSOR']])('a Last-Event-ID %s is 400 (%s)', async (_n, value, code) => {
    const r = await send(port, 'GET', '/api/events?session=s1', { ...auth(), 'Last-Event-ID': value })
    expect(r.status).toBe(400)
    expect(r.json.error.data.code).toBe(code)
  })

  it('an unknown session is 404', async () => {
    const r = await send(port, 'GET', '/api/events?session=nope', auth())
    expect(r.status).toBe(404)
    expect(r.json.error.data.code).toBe('SESSION_NOT_FOUND')
  })

  it('puts approvals on the stream (also to a stream opened later) and takes the answer from /api/respond once', async () => {
    const s = openSse(port, '/api/events?session=s1', auth())
    await s.next((f) => f.event === 'ready')
    const ac = new AbortController()
    const answer = host.client.request('approval/request', { sessionId: 's1', requestId: 'r1', toolCallId: 'c1', tool: 'bash', title: 'rm -rf x', kind: 'tool', rawInput: { command: 'rm -rf x' }, reason: 'writes', options: [] }, ac.signal)
    const frame = await s.next((f) => f.event === 'request')
    expect(frame.data).toMatchObject({ method: 'approval/request', params: { requestId: 'r1' } })
    const late = openSse(port, '/api/events?session=s1', { ...auth(), 'Last-Event-ID': '5' })
    await late.next((f) => f.event === 'request' && f.data.params.requestId === 'r1')
    const invalid = await send(port, 'POST', '/api/respond', json(), JSON.stringify({ sessionId: 's1', requestId: 'r1', result: { decision: 'maybe' } }))
    expect(invalid.status).toBe(400)
    const ok = await send(port, 'POST', '/api/respond', json(), JSON.stringify({ sessionId: 's1', requestId: 'r1', result: { decision: 'reject' } }))
    expect(ok.json).toEqual({ result: {} })
    await expect(answer).resolves.toEqual({ decision: 'reject' })
    await s.next((f) => f.event === 'request-done')
    const again = await send(port, 'POST', '/api/respond', json(), JSON.stringify({ sessionId: 's1', requestId: 'r1', result: { decision: 'allow-once' } }))
    expect(again.json.error.data.code).toBe('REQUEST_NOT_PENDING')
    s.close(); late.close()
  })

  it('a request the host withdraws is gone from the stream', async () => {
    const s = openSse(port, '/api/events?session=s1', auth())
    await s.next((f) => f.event === 'ready')
    const ac = new AbortController()
    const answer = host.client.request('question/request', { sessionId: 's1', requestId: 'q1', toolCallId: 'c1', questions: [] }, ac.signal)
    await s.next((f) => f.event === 'request')
    ac.abort()
    await expect(answer).rejects.toMatchObject({ code: 'REQUEST_CANCELLED' })
    await s.next((f) => f.event === 'request-done' && f.data.requestId === 'q1')
    s.close()
  })

  it('sends heartbeats on every stream', async () => {
    await server.close()
    server = await startWebServer({ args: { port: 0, host: '127.0.0.1', open: false }, connect: (c) => host.connect(c), assetsDir: assets, env: {}, token: TOKEN, cwd: tmpdir(), heartbeatMs: 50 })
    port = server.port
    const hostStream = openSse(port, '/api/events', auth())
    const session = openSse(port, '/api/events?session=s1', auth())
    await hostStream.next((f) => f.event === 'heartbeat')
    await session.next((f) => f.event === 'heartbeat')
    expect(session.frames.filter((f) => f.event === 'heartbeat').every((f) => f.id === undefined)).toBe(true)
    hostStream.close(); session.close()
  })

  it('closing the server ends open streams and refuses pending requests', async () => {
    const s = openSse(port, '/api/events?session=s1', auth())
    await s.next((f) => f.event === 'ready')
    const pending = host.client.request('approval/request', { sessionId: 's1', requestId: 'r9', toolCallId: null, tool: 'bash', title: 'x', kind: 'tool', rawInput: {}, reason: null, options: [] }, new AbortController().signal)
    await s.next((f) => f.event === 'request')
    server.gateway.shutDown()
    const late = await send(port, 'POST', '/api/session/list', json(), '{}')
    expect([late.status, late.json.error.data.code]).toEqual([503, 'SHUTTING_DOWN'])
    await server.close()
    await expect(pending).rejects.toMatchObject({ code: 'REQUEST_CANCELLED' })
  })

  it('the host-level stream says hello and carries status changes', async () => {
    const s = openSse(port, '/api/events', auth())
    await s.next((f) => f.event === 'hello')
    host.client.notify('session/status', { sessionId: 's1', status: 'running' })
    expect((await s.next((f) => f.event === 'status')).data).toEqual({ sessionId: 's1', status: 'running' })
    s.close()
  })
})
