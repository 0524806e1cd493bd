import { DshError } from '@dsh/protocol'

const REASONS: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full (ENOSPC)',
  EDQUOT: 'the disk quota is exhausted (EDQUOT)',
  EIO: 'an I/O error (EIO)',
  EROFS: 'the file system is read-only (EROFS)',
  EACCES: 'permission denied (EACCES)',
  EPERM: 'permission denied (EPERM)',
}

/**
 * SESSION_WRITE_FAILED for a failed write of a session's files: names the session, what
 * was being written and why (errno), with a hint; `data.errno` keeps the code. The Node
 * message is not repeated (it adds nothing but the syscall name). `resumable`: the session
 * exists (the hint says to resume it) rather than failing to be created.
 */
export function writeFailed(sessionId: string, what: string, cause: unknown, resumable = true): DshError {
  if (cause instanceof DshError) return cause
  const errno = (cause as NodeJS.ErrnoException | undefined)?.code
  const why = (errno && REASONS[errno]) ?? (cause as Error | undefined)?.message ?? String(cause)
  const full = errno === 'ENOSPC' || errno === 'EDQUOT'
  const then = resumable ? 'then resume the session (dsh --resume <id>); nothing acknowledged was lost' : 'then run again (nothing was created)'
  return new DshError('SESSION_WRITE_FAILED', `session ${sessionId}: ${what} failed: ${why}`, {
    cause,
    hint: full
      ? `free some disk space, ${then}`
      : `check the disk and the permissions of $DSH_HOME/sessions, ${then}`,
    data: { sessionId, ...(errno ? { errno } : {}) },
  })
}
