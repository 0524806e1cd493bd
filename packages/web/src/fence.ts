import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/**
 * The trust fence, as pure checks over a request's headers. Order of the gateway: Host
 * (403, every path), Origin and Sec-Fetch-Site (403), then for /api the token (401) and
 * for POST the content type (415).
 */

/** A per-launch 256-bit token, hex. */
export function newToken(): string {
  return randomBytes(32).toString('hex')
}

/** Constant-time comparison (both sides hashed first so lengths never leak or throw). */
export function tokenMatches(given: string | undefined, token: string): boolean {
  if (given === undefined) return false
  const a = createHash('sha256').update(given).digest()
  const b = createHash('sha256').update(token).digest()
  return timingSafeEqual(a, b)
}

/** The Host values a request may carry: a loopback name with this port. */
export function allowedHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]
}

export type FenceVerdict = { ok: true } | { ok: false; status: 403; reason: string }

export function checkSite(req: Pick<IncomingMessage, 'headers'>, port: number): FenceVerdict {
  const hosts = allowedHosts(port)
  const host = req.headers.host
  if (host === undefined || !hosts.includes(host.toLowerCase())) {
    return { ok: false, status: 403, reason: `Host ${JSON.stringify(host ?? '')} is not this server (expected ${hosts.join(', ')})` }
  }
  const origin = req.headers.origin
  if (origin !== undefined && !hosts.some((h) => origin.toLowerCase() === `http://${h}`)) {
    return { ok: false, status: 403, reason: `Origin ${JSON.stringify(origin.slice(0, 200))} is not this server` }
  }
  if (String(req.headers['sec-fetch-site'] ?? '').toLowerCase() === 'cross-site') {
    return { ok: false, status: 403, reason: 'cross-site requests are refused' }
  }
  return { ok: true }
}

/**
 * The token a request presents: `Authorization: Bearer`, else (only for the event stream,
 * which EventSource cannot give headers) the `token` query parameter. Never a cookie: a
 * browser sends 127.0.0.1's cookies to every port of it, so a cookie would hand the token
 * to any other local server the user visits (docs/decisions/0075).
 */
export function presentedToken(req: Pick<IncomingMessage, 'headers'>, url: URL): string | undefined {
  const auth = req.headers.authorization
  if (auth !== undefined) {
    const m = /^Bearer\s+(\S+)$/i.exec(auth)
    return m ? m[1] : undefined
  }
  if (url.pathname === '/api/events') return url.searchParams.get('token') ?? undefined
  return undefined
}

export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false
  return value.split(';')[0]!.trim().toLowerCase() === 'application/json'
}

/** Headers on every response. No inline script anywhere: the CSP forbids it. */
export const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
}
