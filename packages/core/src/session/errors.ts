/**
 * Stable error codes of the session service and its stores. Codes never change
 * meaning; messages may be reworded. Every store raises these through `DshError`.
 */
export const SessionErrorCode = {
  /** `append` got data that is not plain JSON (the message names the path and event type). */
  INVALID_EVENT: 'INVALID_EVENT',
  /** `append` after `close()`. */
  SESSION_CLOSED: 'SESSION_CLOSED',
  /** The log holds an event type this reader does not know and may not skip. */
  UNSUPPORTED_EVENT: 'UNSUPPORTED_EVENT',
  /** Another live process (or store) holds the writer lock. */
  SESSION_LOCKED: 'SESSION_LOCKED',
  SESSION_NOT_FOUND: 'SESSION_NOT_FOUND',
  /** The stored log cannot be read (bad line in the middle, bad header, seq gap). */
  SESSION_CORRUPT: 'SESSION_CORRUPT',
  /** `create` with an id that already exists. */
  SESSION_EXISTS: 'SESSION_EXISTS',
  /** The session file was written by a newer dsh (format version above the known one). */
  SESSION_VERSION: 'SESSION_VERSION',
  /** A session id that is not safe as a file name. */
  INVALID_SESSION_ID: 'INVALID_SESSION_ID',
  /** A bad argument to a session service method (e.g. a negative `uptoSeq`). */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  /** A durable write failed; the sink refuses further writes. */
  SESSION_WRITE_FAILED: 'SESSION_WRITE_FAILED',
} as const

export type SessionErrorCode = (typeof SessionErrorCode)[keyof typeof SessionErrorCode]
