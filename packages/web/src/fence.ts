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

/** The cookie carrying the token; named with the port so two launches never share one. */
export function cookieName(port: number): string {
  return `dsh_web_${port}`
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

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>()
  if (!header) return out
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq <= 0) continue
    out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim())
  }
  return out
}

/** The token a request presents: `Authorization: Bearer`, else the port's cookie. */
export function presentedToken(req: Pick<IncomingMessage, 'headers'>, port: number): string | undefined {
  const auth = req.headers.authorization
  if (auth !== undefined) {
    const m = /^Bearer\s+(\S+)$/i.exec(auth)
    return m ? m[1] : undefined
  }
  return parseCookies(req.headers.cookie).get(cookieName(port))
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
