import type { IncomingMessage, ServerResponse } from 'node:http'
import type { HostConnection } from '@dsh/host'
import { METHODS, RPC_ERRORS, issuesOf } from '@dsh/host-api'
import { DshError } from '@dsh/protocol'
import { rpcError, toRpcError } from './errors.js'
import { SECURITY_HEADERS, checkSite, isJsonContentType, presentedToken, tokenMatches } from './fence.js'
import { FsListParams, FsMkdirParams, listDirectory, makeDirectory } from './fsapi.js'
import type { WebHub } from './hub.js'
import { openSessionStream } from './streams.js'
import { SseStream } from './sse.js'
import { encodingFor, type Asset } from './static.js'

export interface GatewayOptions {
  /** The bound port (known after listen). */
  port(): number
  token: string
  connection: HostConnection
  hub: WebHub
  assets: Map<string, Asset> | null
  /** The folder browser's starting point. */
  cwd: string
}

const MAX_BODY = 16 * 1024 * 1024
/** Handled by the gateway itself, not passed to the host. */
const LOCAL = new Set(['respond', 'session/respond', 'fs/list', 'fs/mkdir'])
/** Calls after which the host-level stream tells tabs to refresh their session list. */
const LIST_CHANGES = new Set(['session/create', 'session/fork', 'session/rename', 'session/archive', 'session/delete', 'session/open', 'session/close'])

export interface Gateway {
  handle(req: IncomingMessage, res: ServerResponse): void
  /** From now on every /api request is 503 (the server drains). */
  shutDown(): void
  /** Sessions this gateway opened or created (owned by its connection). */
  readonly opened: Set<string>
}

export function createGateway(opts: GatewayOptions): Gateway {
  const opened = new Set<string>()
  let closing = false

  function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body)
    res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers })
    res.end(text)
  }
  function fail(res: ServerResponse, e: { status: number; error: unknown }): void {
    answer(res, e.status, { error: e.error })
  }
  function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
    res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers })
    res.end(text + '\n')
  }

  async function call(method: string, params: unknown): Promise<unknown> {
    if (method === 'respond' || method === 'session/respond') {
      const parsed = METHODS['session/respond'].params.safeParse(params)
      if (!parsed.success) throw new DshError('INVALID_PARAMS', 'invalid params for session/respond', { data: { issues: issuesOf(parsed.error) } })
      opts.hub.respond(parsed.data.sessionId, parsed.data.requestId, parsed.data.result)
      return {}
    }
    if (method === 'fs/list' || method === 'fs/mkdir') {
      const schema = method === 'fs/list' ? FsListParams : FsMkdirParams
      const parsed = schema.safeParse(params)
      if (!parsed.success) throw new DshError('INVALID_PARAMS', `invalid params for ${method}`, { data: { issues: issuesOf(parsed.error) } })
      return method === 'fs/list' ? listDirectory({ path: opts.cwd, ...parsed.data }) : makeDirectory(parsed.data as { path: string })
    }
    const result = await opts.connection.callUnchecked(method, params)
    const sessionId = (params as { sessionId?: string }).sessionId
    if (method === 'session/create' || method === 'session/fork' || method === 'session/open') {
      const id = (result as { session?: { id?: string } }).session?.id
      if (id) opened.add(id)
    }
    if (method === 'session/close' && sessionId) opened.delete(sessionId)
    if (method === 'session/delete' && sessionId) {
      opened.delete(sessionId)
      opts.hub.toSession(sessionId, 'deleted', { sessionId })
    }
    if (LIST_CHANGES.has(method)) opts.hub.toHost('sessions-changed', { method, ...(sessionId ? { sessionId } : {}) })
    return result
  }

  async function readBody(req: IncomingMessage): Promise<Buffer | null> {
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length
      if (size > MAX_BODY) return null
      chunks.push(chunk)
    }
    return Buffer.concat(chunks)
  }

  async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const name = url.pathname.slice('/api/'.length)
    if (name === 'events') {
      if (req.method !== 'GET') return plain(res, 405, 'the event stream is GET /api/events[?session=ID]', { Allow: 'GET' })
      const sessionId = url.searchParams.get('session')
      if (sessionId === null) return hostStream(res)
      return openSessionStream({ connection: opts.connection, hub: opts.hub, opened, answerError: (e) => fail(res, e) },
        res, sessionId, req.headers['last-event-id'] as string | undefined, url.searchParams.get('after'))
    }
    if (req.method !== 'POST') return fail(res, { status: 405, error: { code: RPC_ERRORS.INVALID_REQUEST, message: `${name} is called with POST and a JSON body` } })
    if (!isJsonContentType(req.headers['content-type'])) {
      return fail(res, { status: 415, error: { code: RPC_ERRORS.INVALID_REQUEST, message: 'a POST body must be Content-Type: application/json' } })
    }
    const known = LOCAL.has(name) || (Object.hasOwn(METHODS, name) && (METHODS[name as keyof typeof METHODS].carriers as readonly string[]).includes('web') && name !== 'initialize')
    if (!known) {
      return fail(res, rpcError(RPC_ERRORS.METHOD_NOT_FOUND, `unknown method ${JSON.stringify(name.slice(0, 80))}`, { hint: 'rpc/describe lists every method' }))
    }
    const raw = await readBody(req)
    if (raw === null) return fail(res, { status: 413, error: { code: RPC_ERRORS.INVALID_REQUEST, message: `the body is larger than ${MAX_BODY} bytes` } })
    let params: unknown = {}
    if (raw.length) {
      try {
        params = JSON.parse(raw.toString('utf8'))
      } catch {
        return fail(res, rpcError(RPC_ERRORS.PARSE_ERROR, 'the body is not valid JSON'))
      }
    }
    if (params === null || typeof params !== 'object' || Array.isArray(params)) {
      return fail(res, rpcError(RPC_ERRORS.INVALID_PARAMS, 'params must be a JSON object', { issues: [{ path: 'params', message: 'expected an object' }] }))
    }
    try {
      answer(res, 200, { result: await call(name, params) })
    } catch (error) {
      fail(res, toRpcError(error))
    }
  }

  function hostStream(res: ServerResponse): void {
    const stream = new SseStream(res, SECURITY_HEADERS)
    opts.hub.hostStreams.add(stream)
    stream.whenClosed(() => opts.hub.hostStreams.delete(stream))
    stream.send('hello', { pending: opts.hub.pendingOf().map((p) => ({ method: p.method, sessionId: (p.params as { sessionId: string }).sessionId })) })
  }

  function serveStatic(req: IncomingMessage, res: ServerResponse, url: URL): void {
    if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'method not allowed', { Allow: 'GET, HEAD' })
    if (url.pathname === '/' && url.searchParams.has('token')) {
      const given = url.searchParams.get('token') ?? ''
      if (!tokenMatches(given, opts.token)) return plain(res, 401, 'wrong token: open the URL that `dsh web` printed')
      // The page keeps the token in its origin's localStorage (port-scoped, unlike a cookie); the
      // fragment never reaches a server, and the page removes it from the address bar.
      res.writeHead(303, { ...SECURITY_HEADERS, 'Cache-Control': 'no-store', Location: `/#token=${opts.token}` })
      return void res.end()
    }
    if (!opts.assets) return plain(res, 503, 'the web UI is not built: run `npm run build`')
    const isRoute = url.pathname === '/' || url.pathname.startsWith('/s/')
    const asset = opts.assets.get(isRoute ? '/index.html' : url.pathname)
    if (!asset) return plain(res, 404, 'not found')
    const { body, encoding } = encodingFor(asset, req.headers['accept-encoding'] as string | undefined)
    res.writeHead(200, {
      ...SECURITY_HEADERS, 'Content-Type': asset.type, 'Content-Length': String(body.length), Vary: 'Accept-Encoding',
      'Cache-Control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      ...(encoding ? { 'Content-Encoding': encoding } : {}),
    })
    res.end(req.method === 'HEAD' ? undefined : body)
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const site = checkSite(req, opts.port())
    if (!site.ok) return plain(res, site.status, `forbidden: ${site.reason}`)
    let url: URL
    try {
      url = new URL(req.url ?? '/', 'http://localhost')
    } catch {
      return plain(res, 400, 'bad request URL')
    }
    if (url.pathname.startsWith('/api/')) {
      if (closing) return fail(res, { status: 503, error: { code: RPC_ERRORS.INTERNAL_ERROR, message: 'dsh web is shutting down', data: { code: 'SHUTTING_DOWN' } } })
      if (!tokenMatches(presentedToken(req, url), opts.token)) {
        return fail(res, { status: 401, error: { code: RPC_ERRORS.INVALID_REQUEST, message: 'not authorised: open the URL that `dsh web` printed (or send Authorization: Bearer TOKEN)', data: { code: 'UNAUTHORIZED' } } })
      }
      api(req, res, url).catch((error: unknown) => {
        if (!res.headersSent) fail(res, toRpcError(error))
        else res.end()
      })
      return
    }
    serveStatic(req, res, url)
  }

  return { handle, opened, shutDown: () => { closing = true } }
}
