import type { SessionEvent, SessionHeader } from '@dsh/protocol'
import type { SessionSink } from './session.js'

/** What `list()` reports of one stored session (cheap to compute: no full read). */
export interface SessionInfo {
  id: string
  cwd: string
  title?: string
  created: number
  /** Last durable write (file mtime for JSONL). */
  updatedAt: number
  parent?: SessionHeader['parent']
  /** Number of events in the log. */
  events: number
}

/**
 * A loaded log. `notices` are human-readable lines about what the load did to the stored
 * form (a dropped torn line, a migration); the session manager appends each one as a
 * `notice` event after opening, so the log records them too.
 */
export interface LoadedSession {
  header: SessionHeader
  events: SessionEvent[]
  notices?: string[]
}

/**
 * The seam persistence implements (`ctx.sessionStore`). Ids are validated by the store
 * (INVALID_SESSION_ID). Errors are DshErrors with the codes of `SessionErrorCode`.
 */
export interface SessionStore {
  /** Creates the stored session (header durable when this resolves) and takes the writer lock. SESSION_EXISTS, SESSION_LOCKED. */
  create(header: SessionHeader): Promise<SessionSink>
  /** Takes the writer lock and loads the log (the caller repairs it). SESSION_NOT_FOUND, SESSION_LOCKED, SESSION_CORRUPT, SESSION_VERSION. */
  open(id: string): Promise<LoadedSession & { sink: SessionSink }>
  /** Loads without the lock and without changing anything stored. */
  read(id: string): Promise<LoadedSession>
  /** Newest `updatedAt` first. */
  list(filter?: { cwd?: string }): Promise<SessionInfo[]>
  /** Whether a live writer holds the session's lock. */
  isLocked(id: string): Promise<boolean>
  /** Removes a stored session that no live writer holds. SESSION_NOT_FOUND, SESSION_LOCKED. */
  delete(id: string): Promise<void>
}

declare module '@deepseek-ai/cordis' {
  interface Context {
    sessionStore: SessionStore
  }
}
