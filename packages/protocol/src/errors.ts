/**
 * Errors that cross a boundary carry a stable `code` (machine-readable, never
 * reworded), a human message, an optional `hint` (how to fix it) and a `cause`.
 * Surfaces print `CODE: message` and the hint; never a stack trace unless DSH_DEBUG=1.
 */
export class DshError extends Error {
  override name = 'DshError'
  readonly code: string
  readonly hint: string | undefined
  readonly data: Record<string, unknown> | undefined

  constructor(code: string, message: string, options: { cause?: unknown; hint?: string; data?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.hint = options.hint
    this.data = options.data
  }
}

export function isDshError(error: unknown, code?: string): error is DshError {
  return error instanceof Error && typeof (error as DshError).code === 'string' && (error as DshError).name === 'DshError'
    && (code === undefined || (error as DshError).code === code)
}

/** One line for a user's screen: `CODE: message` plus the hint, if any. */
export function formatError(error: unknown): string {
  if (isDshError(error)) return `${error.code}: ${error.message}${error.hint ? `\n  hint: ${error.hint}` : ''}`
  if (error instanceof Error) return `INTERNAL: ${error.message}`
  return `INTERNAL: ${String(error)}`
}

/** A plain-data view of an error, safe to log in a session event. */
export interface ErrorInfo {
  code: string
  message: string
  /** What the user can do about it (a DshError's hint). */
  hint?: string
}

export function errorInfo(error: unknown): ErrorInfo {
  if (isDshError(error)) return error.hint ? { code: error.code, message: error.message, hint: error.hint } : { code: error.code, message: error.message }
  if (error instanceof Error) return { code: 'INTERNAL', message: error.message }
  return { code: 'INTERNAL', message: String(error) }
}
