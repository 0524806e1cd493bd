import { randomBytes, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type * as acp from '@agentclientprotocol/sdk/unstable'
import type { AcpConnection } from './connection.js'
import { authRequired } from './errors.js'

/** How long the login page waits for the key. */
export const BROWSER_LOGIN_TIMEOUT_MS = 5 * 60_000
const MAX_BODY = 16 * 1024

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head><body style="font-family:sans-serif;max-width:36em;margin:3em auto">${body}</body></html>`
}

function form(provider: string): string {
  return page('dsh login', `<h1>dsh: ${escape(provider)} API key</h1>
<form method="post"><p><input type="password" name="apiKey" autocomplete="off" size="60" autofocus required></p>
<p><button type="submit">Save</button></p></form>
<p>The key is stored in your dsh credential store on this machine; it is not sent to your editor.</p>`)
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY) {
        reject(new Error('request body too large'))
        req.destroy()
      } else chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

function keyFrom(body: string, type: string | undefined): string {
  if (type?.startsWith('application/json')) {
    const parsed = JSON.parse(body) as { apiKey?: unknown }
    return typeof parsed.apiKey === 'string' ? parsed.apiKey.trim() : ''
  }
  return (new URLSearchParams(body).get('apiKey') ?? '').trim()
}

/**
 * The `browser` auth method: serves a one-time login page on 127.0.0.1 (random port,
 * random 32-byte token in the path; any other path is 404), hands its URL to the client
 * by URL elicitation scoped to the `authenticate` request, and resolves once the page
 * received a key and stored it. The key travels browser → this process only. A declined
 * or cancelled elicitation, a timeout or a cancelled request fails with auth_required.
 */
export async function browserLogin(b: AcpConnection, provider: string, requestId: acp.JsonRpcId, signal: AbortSignal, methods: readonly acp.AuthMethod[]): Promise<void> {
  const token = randomBytes(32).toString('base64url')
  const path = `/login/${token}`
  let done: () => void = () => undefined
  const stored = new Promise<void>((resolve) => { done = resolve })
  let used = false
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const ok = req.url !== undefined && req.url.length === path.length && timingSafeEqual(Buffer.from(req.url), Buffer.from(path))
    const send = (status: number, html: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' })
      res.end(html)
    }
    if (!ok) return send(404, page('Not found', '<p>Not found.</p>'))
    if (used) return send(410, page('dsh login', '<p>This login link was already used.</p>'))
    if (req.method === 'GET') return send(200, form(provider))
    if (req.method !== 'POST') return send(405, page('dsh login', '<p>Method not allowed.</p>'))
    readBody(req).then((body) => {
      const key = keyFrom(body, req.headers['content-type'])
      if (!key || /\s/.test(key)) return send(400, page('dsh login', '<p>Give the key alone, without spaces.</p>') + form(provider))
      b.ctx.credentials.set(provider, { apiKey: key })
      used = true
      send(200, page('dsh login', `<p>Saved the ${escape(provider)} key. You can close this page and return to your editor.</p>`))
      done()
    }).catch(() => send(400, page('dsh login', '<p>Could not read the form.</p>')))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`
  const elicitationId = `dsh-login-${randomBytes(8).toString('hex')}`
  const abort = new AbortController()
  const onAbort = () => abort.abort()
  signal.addEventListener('abort', onAbort, { once: true })
  const timer = setTimeout(() => abort.abort(), BROWSER_LOGIN_TIMEOUT_MS)
  const aborted = new Promise<never>((_, reject) => abort.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }))
  aborted.catch(() => undefined)
  try {
    const answer = await Promise.race([
      b.client.request('elicitation/create', {
        mode: 'url', requestId, elicitationId, url,
        message: `Open this page to store your ${provider} API key for dsh. The key stays on this machine.`,
      }, { cancellationSignal: abort.signal }),
      aborted,
    ])
    if (answer.action !== 'accept') throw authRequired(`the login page was ${answer.action === 'decline' ? 'declined' : 'cancelled'}`, methods, provider)
    await Promise.race([stored, aborted])
    await b.client.notify('elicitation/complete', { elicitationId })
  } catch (error) {
    if (error instanceof Error && error.message === 'aborted') throw authRequired(signal.aborted ? 'the login was cancelled' : 'the login page timed out', methods, provider)
    throw error
  } finally {
    clearTimeout(timer)
    signal.removeEventListener('abort', onAbort)
    server.closeAllConnections()
    server.close()
  }
}
