import { latestTitle, type SessionInfo } from '@dsh/core'
import { DshError, textOf, type AssistantBlock, type SessionEvent, type SessionHeader, type UserContent } from '@dsh/protocol'
import type { Conn } from '../connection.js'
import type { HostCore } from '../core.js'
import { viewsOf } from '../views.js'
import type { In, Out } from './types.js'

type Summary = Out<'session/list'>['sessions'][number]

/** The cursor of a list page: the sort key of the last item shown (newest first: updatedAt desc, id desc). */
function encodeCursor(s: { updatedAt: number; id: string }): string {
  return Buffer.from(JSON.stringify([s.updatedAt, s.id])).toString('base64url')
}

function decodeCursor(cursor: string): [number, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown
    if (Array.isArray(value) && typeof value[0] === 'number' && typeof value[1] === 'string') return [value[0], value[1]]
  } catch {
    // reported below
  }
  throw new DshError('INVALID_PARAMS', 'cursor is not one this host gave out', { data: { issues: [{ path: 'params.cursor', message: 'unknown cursor' }] } })
}

const after = (s: { updatedAt: number; id: string }, [t, id]: [number, string]) => s.updatedAt < t || (s.updatedAt === t && s.id < id)

/** Whether a log's messages contain `needle` (case-insensitive): user and assistant text. */
function contentMatches(events: readonly SessionEvent[], needle: string): boolean {
  for (const event of events) {
    let text = ''
    if (event.type === 'user/message') text = (event.data as unknown as { content: UserContent[] }).content.map((p) => (p.type === 'text' ? p.text : '')).join('\n')
    else if (event.type === 'assistant/message') text = textOf((event.data as unknown as { content: AssistantBlock[] }).content)
    if (text && text.toLowerCase().includes(needle)) return true
  }
  return false
}

function summary(h: HostCore, info: SessionInfo): Summary {
  const hosted = h.hosted.get(info.id)
  if (hosted) return h.detail(hosted)
  return {
    id: info.id, workspace: info.cwd, title: info.title ?? null, created: info.created, updatedAt: info.updatedAt, events: info.events,
    status: 'idle', archived: h.archive.has(info.id), parent: info.parent ? { ...info.parent } : null, open: false,
  }
}

/** Newest first; `query` matches titles, then message text; archived sessions only when asked. */
export async function listSessions(h: HostCore, _conn: Conn, p: In<'session/list'>): Promise<Out<'session/list'>> {
  const limit = p.limit ?? 50
  const infos = await h.ctx.sessions.list(p.workspace ? { cwd: p.workspace } : undefined)
  const start = p.cursor ? decodeCursor(p.cursor) : undefined
  const needle = p.query?.trim().toLowerCase()
  const out: Summary[] = []
  // the cursor is the store's sort key of the last item shown (an open session's summary may be newer than its stored line)
  let last: SessionInfo | undefined
  let more = false
  for (const info of infos) {
    if (start && !after(info, start)) continue
    if (h.archive.has(info.id) !== !!p.archived) continue
    if (needle && !(info.title ?? '').toLowerCase().includes(needle)) {
      const hosted = h.hosted.get(info.id)
      const events = hosted ? hosted.durableEvents() : await h.ctx.sessions.read(info.id).then((l) => l.events, () => [])
      if (!contentMatches(events, needle)) continue
    }
    if (out.length === limit) {
      more = true
      break
    }
    out.push(summary(h, info))
    last = info
  }
  return { sessions: out, nextCursor: more && last ? encodeCursor(last) : null }
}

export async function getSession(h: HostCore, _conn: Conn, p: In<'session/get'>): Promise<Out<'session/get'>> {
  const hosted = h.hosted.get(p.sessionId)
  if (hosted) return { session: h.detail(hosted) }
  const { header, events } = await h.ctx.sessions.read(p.sessionId)
  const presets = h.presets
  const select = [...events].reverse().find((e) => e.type === 'model/select' || e.type === 'request/header')
  const logged = (select?.type === 'model/select' ? select.data : (select?.data as { config?: unknown } | undefined)?.config) as { provider?: string; model?: string; reasoningEffort?: string } | undefined
  const defaults = h.ctx.llm.defaults({ provider: logged?.provider, model: logged?.model })
  const lastOf = (type: string) => [...events].reverse().find((e) => e.type === type)?.data as { preset?: string } | undefined
  return {
    session: {
      id: header.id, workspace: header.cwd, title: latestTitle(events) ?? null, created: header.created,
      updatedAt: events.at(-1)?.time ?? header.created, events: events.length, status: 'idle', archived: h.archive.has(header.id),
      parent: header.parent ? { ...header.parent } : null, open: false, lastSeq: events.length - 1,
      config: {
        provider: defaults.provider, model: defaults.model, reasoningEffort: (logged?.reasoningEffort ?? null) as never,
        permissionMode: lastOf('permission/preset')?.preset ?? h.ctx.permission.defaultId,
        agentPreset: lastOf('agent/preset')?.preset ?? presets?.defaultId ?? null,
      },
    },
  }
}

/** Logged as `session/title {source: 'user'}`: on the hosted session, or by opening the stored one briefly. */
export async function renameSession(h: HostCore, conn: Conn, p: In<'session/rename'>): Promise<Out<'session/rename'>> {
  const hosted = h.hosted.get(p.sessionId)
  if (hosted) {
    if (hosted.owner !== conn) await h.owned(conn, p.sessionId)
    hosted.session.append('session/title', { title: p.title, source: 'user' }, { ignorable: true })
    await hosted.session.flush()
    return {}
  }
  const session = await h.ctx.sessions.open(p.sessionId)
  try {
    session.append('session/title', { title: p.title, source: 'user' }, { ignorable: true })
  } finally {
    await session.close()
  }
  return {}
}

export async function archiveSession(h: HostCore, _conn: Conn, p: In<'session/archive'>): Promise<Out<'session/archive'>> {
  if (!h.hosted.has(p.sessionId)) await h.ctx.sessions.read(p.sessionId)
  h.archive.set(p.sessionId, p.archived)
  return {}
}

/** Refused while the session runs (SESSION_BUSY) or is owned by another client; an idle one of the caller's is closed first. */
export async function deleteSession(h: HostCore, conn: Conn, p: In<'session/delete'>): Promise<Out<'session/delete'>> {
  const hosted = h.hosted.get(p.sessionId)
  if (hosted) {
    if (hosted.status !== 'idle') throw new DshError('SESSION_BUSY', `session ${p.sessionId} is ${hosted.status}; cancel it before deleting`)
    await h.owned(conn, p.sessionId)
    await h.release(hosted)
  }
  await h.ctx.sessionStore.delete(p.sessionId)
  h.archive.set(p.sessionId, false)
  return {}
}

async function durableLog(h: HostCore, id: string): Promise<{ header: SessionHeader; events: readonly SessionEvent[] }> {
  const hosted = h.hosted.get(id)
  if (hosted) return { header: hosted.session.header, events: hosted.durableEvents() }
  return h.ctx.sessions.read(id)
}

/** A page of the durable log: after `afterSeq` (forward), else before `beforeSeq` (backward, the newest `limit`). */
export async function history(h: HostCore, _conn: Conn, p: In<'session/history'>): Promise<Out<'session/history'>> {
  const { events } = await durableLog(h, p.sessionId)
  const limit = p.limit ?? 200
  const lo = (p.afterSeq ?? -1) + 1
  const hi = Math.min(p.beforeSeq ?? events.length, events.length)
  let from = lo
  let to = hi
  if (p.afterSeq === undefined && p.beforeSeq !== undefined) from = Math.max(lo, hi - limit)
  else to = Math.min(hi, lo + limit)
  const hosted = h.hosted.get(p.sessionId)
  const stored = hosted ? undefined : viewsOf(events.slice(0, to), (name) => h.ctx.tools.get(name, p.sessionId))
  const viewAt = (seq: number) => (hosted ? hosted.viewAt(seq) : stored?.[seq] ?? null)
  const items = []
  for (let seq = from; seq < to; seq++) items.push({ event: events[seq]! as never, view: viewAt(seq) as never })
  const hasMore = p.afterSeq === undefined && p.beforeSeq !== undefined ? from > lo : to < hi
  return { items, lastSeq: events.length - 1, hasMore }
}

export async function exportSession(h: HostCore, _conn: Conn, p: In<'session/export'>): Promise<Out<'session/export'>> {
  const { header, events } = await durableLog(h, p.sessionId)
  return { jsonl: [header, ...events].map((x) => JSON.stringify(x)).join('\n') + '\n' }
}
