import type { ServerResponse } from 'node:http'
import type { HostConnection } from '@dsh/host'
import { RPC_ERRORS, type ResultOf } from '@dsh/host-api'
import { isDshError } from '@dsh/protocol'
import { rpcError, toRpcError } from './errors.js'
import { SECURITY_HEADERS } from './fence.js'
import type { SessionListener, WebHub } from './hub.js'
import { SseStream, parseCursor } from './sse.js'

export interface StreamDeps {
  connection: HostConnection
  hub: WebHub
  opened: Set<string>
  answerError(e: { status: number; error: unknown }): void
}

const PAGE = 500

/**
 * `GET /api/events?session=ID` with `Last-Event-ID: SEQ` (or `after=SEQ`): the durable
 * log after SEQ, then live, with no gap and no duplicate. The listener is registered
 * before the replay is read, so an event appended meanwhile is held and sent after the
 * replay unless the replay already had it. A cursor that is not a number or lies beyond
 * the log's end is refused before the stream opens (400), as is an unknown session (404).
 */
export async function openSessionStream(deps: StreamDeps, res: ServerResponse, sessionId: string, header: string | undefined, query: string | null): Promise<void> {
  const cursor = parseCursor(header, query)
  if (!cursor.ok) return deps.answerError(rpcError(RPC_ERRORS.INVALID_PARAMS, cursor.message, { code: 'BAD_CURSOR' }))
  let detail: ResultOf<'session/get'>
  try {
    detail = await deps.connection.callUnchecked('session/get', { sessionId }) as ResultOf<'session/get'>
  } catch (error) {
    return deps.answerError(toRpcError(error))
  }
  if (cursor.afterSeq > detail.session.lastSeq) {
    return deps.answerError(rpcError(RPC_ERRORS.INVALID_PARAMS, `Last-Event-ID ${cursor.afterSeq} is beyond the end of session ${sessionId} (last seq ${detail.session.lastSeq})`, { code: 'CURSOR_BEYOND_END', lastSeq: detail.session.lastSeq }))
  }
  const stream = new SseStream(res, SECURITY_HEADERS)
  const listener: SessionListener = { sessionId, stream, lastSent: cursor.afterSeq, held: [] }
  deps.hub.sessions.add(listener)
  stream.whenClosed(() => deps.hub.sessions.delete(listener))
  const parent = detail.session.parent
  // a subagent's session belongs to its parent's turn: watched, never opened (so never owned) here
  let readOnly = !!parent && !parent.fork && parent.callId !== undefined
  if (readOnly) {
    await deps.connection.callUnchecked('session/subscribe', { sessionId, afterSeq: detail.session.lastSeq }).catch(() => undefined)
  } else if (!deps.opened.has(sessionId)) {
    try {
      await deps.connection.callUnchecked('session/open', { sessionId })
      deps.opened.add(sessionId)
    } catch (error) {
      // held elsewhere (another process, or a subagent's parent): watch it read-only
      readOnly = true
      await deps.connection.callUnchecked('session/subscribe', { sessionId, afterSeq: detail.session.lastSeq }).catch(() => undefined)
      stream.send('notice', { readOnly: true, reason: isDshError(error) ? `${error.code}: ${error.message}` : String(error) })
    }
  }
  try {
    let after = cursor.afterSeq
    for (;;) {
      if (stream.closed) return
      const page = await deps.connection.callUnchecked('session/history', { sessionId, afterSeq: after, limit: PAGE }) as ResultOf<'session/history'>
      for (const item of page.items) {
        if (item.event.seq <= listener.lastSent) continue
        listener.lastSent = item.event.seq
        stream.send('event', { sessionId, event: item.event, view: item.view }, item.event.seq)
      }
      const last = page.items.at(-1)?.event.seq
      if (!page.hasMore || last === undefined) break
      after = last
    }
    const now = await deps.connection.callUnchecked('session/get', { sessionId }) as ResultOf<'session/get'>
    stream.send('ready', { sessionId, lastSeq: listener.lastSent, readOnly, session: now.session })
    for (const p of deps.hub.pendingOf(sessionId)) stream.send('request', p)
    deps.hub.goLive(listener)
  } catch (error) {
    stream.send('stream-error', toRpcError(error).error)
    stream.end()
  }
}
