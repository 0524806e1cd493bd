import { randomBytes } from 'node:crypto'
import { DshError } from '@dsh/protocol'
import { SessionErrorCode } from './errors.js'

/** Ids are `[A-Za-z0-9]` first, then `[A-Za-z0-9._-]`, at most 128 characters: safe as file names. */
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

export function isValidSessionId(id: string): boolean {
  return ID_PATTERN.test(id)
}

export function assertSessionId(id: string): void {
  if (!isValidSessionId(id)) {
    throw new DshError(SessionErrorCode.INVALID_SESSION_ID, `invalid session id ${JSON.stringify(id)}`, {
      hint: 'a session id is 1-128 characters of letters, digits, ".", "_" and "-", starting with a letter or digit',
    })
  }
}

let lastTime = 0
let counter = 0

/**
 * A new session id: 9 base36 characters of milliseconds since the epoch (sortable
 * until the year 5188), a 2-character in-process counter (sortable within one
 * millisecond), then 8 random hex characters. Example: `mfz0c1x2a00-3f9a0c1e`.
 */
export function newSessionId(now = Date.now()): string {
  if (now <= lastTime) counter++
  else { lastTime = now; counter = 0 }
  const time = lastTime.toString(36).padStart(9, '0')
  const seq = (counter % 1296).toString(36).padStart(2, '0')
  return `${time}${seq}-${randomBytes(4).toString('hex')}`
}
