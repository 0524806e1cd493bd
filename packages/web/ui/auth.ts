/**
 * The launch token, held in this origin's localStorage. localStorage is scoped to the origin
 * (port included); a cookie would be sent to every port of 127.0.0.1 (docs/decisions/0075).
 * The server's `/?token=T` redirects to `/#token=T`; `adoptToken` moves it into storage and
 * out of the address bar.
 */
const KEY = 'dsh.token'

export function adoptToken(): void {
  const m = /^#token=([0-9a-f]{64})$/.exec(location.hash)
  if (!m) return
  localStorage.setItem(KEY, m[1]!)
  history.replaceState(history.state, '', location.pathname + location.search)
}

export function authToken(): string {
  return localStorage.getItem(KEY) ?? ''
}

/** `path` (a same-origin /api/events URL) with the token as a query parameter: EventSource sends no headers. */
export function withToken(path: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}token=${encodeURIComponent(authToken())}`
}
