import { ToolError, type ToolCallContext } from '@dsh/core'
import type { FileStat } from '@dsh/exec'

export interface Stamp { mtimeMs: number; size: number }

/** Event types logged (ignorable) when the model reads or writes a file: `{path, mtimeMs, size}` with the real path. */
export const FILE_READ_EVENT = 'file/read'
export const FILE_WRITE_EVENT = 'file/write'

interface EventLike { type: string; data: unknown }

/** The last stamp a session's log holds for `path` (from `file/read` and `file/write` events). */
export function stampFromEvents(events: readonly EventLike[], path: string): Stamp | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!
    if (e.type !== FILE_READ_EVENT && e.type !== FILE_WRITE_EVENT) continue
    const d = e.data as { path?: unknown; mtimeMs?: unknown; size?: unknown } | null
    if (d && d.path === path && typeof d.mtimeMs === 'number' && typeof d.size === 'number') return { mtimeMs: d.mtimeMs, size: d.size }
  }
  return undefined
}

function sessionEvents(call: ToolCallContext): readonly EventLike[] {
  try {
    const sessions = (call.ctx as unknown as { sessions?: { get(id: string): { events: readonly EventLike[] } | undefined } }).sessions
    return sessions?.get(call.sessionId)?.events ?? []
  } catch {
    return []
  }
}

/**
 * What the model last saw of each file, per session: sessionId → real path → stamp.
 * Unknown to this map (e.g. after a restart), a file's stamp is rebuilt from the
 * session's logged `file/read` / `file/write` events when `ctx.sessions` has it.
 * Rules: an edit or overwrite of a file whose size or mtime differs from the stamp is
 * refused; an overwrite of an existing file with no stamp at all is refused (read it
 * first); an edit of a file with no stamp is allowed, since its exact old_string match
 * proves the model knows the text it replaces.
 */
export class FileStamps {
  private readonly sessions = new Map<string, Map<string, Stamp>>()

  lookup(call: ToolCallContext, realPath: string): Stamp | undefined {
    const known = this.sessions.get(call.sessionId)?.get(realPath)
    if (known) return known
    const rebuilt = stampFromEvents(sessionEvents(call), realPath)
    if (rebuilt) this.set(call.sessionId, realPath, rebuilt)
    return rebuilt
  }

  set(sessionId: string, realPath: string, stamp: Stamp): void {
    let files = this.sessions.get(sessionId)
    if (!files) this.sessions.set(sessionId, files = new Map())
    files.set(realPath, { mtimeMs: stamp.mtimeMs, size: stamp.size })
  }

  /** Records and logs what the model now knows of the file. */
  record(call: ToolCallContext, type: typeof FILE_READ_EVENT | typeof FILE_WRITE_EVENT, realPath: string, st: FileStat): void {
    this.set(call.sessionId, realPath, st)
    call.log(type, { path: realPath, mtimeMs: st.mtimeMs, size: st.size }, { ignorable: true })
  }

  /** Throws a ToolError when the file changed since the model last saw it (see the class rules). */
  assertFresh(call: ToolCallContext, shown: string, realPath: string, current: FileStat, action: 'edit' | 'overwrite'): void {
    const known = this.lookup(call, realPath)
    if (!known) {
      if (action === 'overwrite') {
        throw new ToolError(`${shown} already exists and you have not read it in this session. Read it first `
          + '(or change it with edit), so you do not overwrite content you have not seen.')
      }
      return
    }
    if (known.mtimeMs !== current.mtimeMs || known.size !== current.size) {
      throw new ToolError(`${shown} changed on disk since you last read or wrote it (now ${current.size} bytes, modified `
        + `${new Date(current.mtimeMs).toISOString()}; you saw ${known.size} bytes from ${new Date(known.mtimeMs).toISOString()}). `
        + `Read it again, then redo the ${action} against the current content.`)
    }
  }
}
