import { open } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import type { Json, SessionHeader } from '@dsh/protocol'
import type { LoadedSession, SessionInfo } from '@dsh/core'
import { SESSION_FORMAT } from './format.js'

const CHUNK = 64 * 1024
const MAX_HEADER = 1024 * 1024

type JsonRecord = { [key: string]: Json }

/**
 * A session's list entry from its first line (the header) and its last complete line
 * (`seq + 1` events), without reading the whole file. A headerless (version 0) file, or one
 * whose tail yields no event, falls back to `readAll` (a full parse). `title` is left to
 * the caller (the meta sidecar).
 */
export async function readSessionInfo(file: string, id: string, readAll: () => Promise<LoadedSession>): Promise<SessionInfo> {
  const handle = await open(file, 'r')
  let header: JsonRecord | undefined
  let count: number | undefined
  let updatedAt: number
  try {
    const { size, mtimeMs } = await handle.stat()
    updatedAt = Math.round(mtimeMs)
    const first = await readFirstLine(handle, size)
    if (isRecord(first) && first['format'] === SESSION_FORMAT) {
      header = first
      count = await lastSeq(handle, size)
    }
  } finally {
    await handle.close()
  }
  if (!header || count === undefined) {
    const loaded = await readAll()
    return infoOf(loaded.header as unknown as JsonRecord, loaded.events.length, updatedAt, id)
  }
  return infoOf(header, count, updatedAt, id)
}

function infoOf(header: JsonRecord, events: number, updatedAt: number, id: string): SessionInfo {
  const info: SessionInfo = {
    id: typeof header['id'] === 'string' ? header['id'] : id,
    cwd: typeof header['cwd'] === 'string' ? header['cwd'] : '/',
    created: typeof header['created'] === 'number' ? header['created'] : 0,
    updatedAt,
    events,
  }
  if (isRecord(header['parent'])) info.parent = header['parent'] as unknown as NonNullable<SessionHeader['parent']>
  return info
}

async function readFirstLine(handle: FileHandle, size: number): Promise<unknown> {
  let length = Math.min(CHUNK, size)
  for (;;) {
    const buffer = Buffer.alloc(length)
    const { bytesRead } = await handle.read(buffer, 0, length, 0)
    const nl = buffer.subarray(0, bytesRead).indexOf(10)
    if (nl >= 0) return parseOrUndefined(buffer.toString('utf8', 0, nl))
    if (bytesRead >= size || length >= MAX_HEADER) return undefined
    length = Math.min(length * 4, size, MAX_HEADER)
  }
}

/**
 * The event count read from the tail: the seq of the last complete line that parses
 * (a torn tail is skipped) + 1; 0 when that line is the header; undefined when unknown.
 */
async function lastSeq(handle: FileHandle, size: number): Promise<number | undefined> {
  let length = Math.min(CHUNK, size)
  for (;;) {
    const start = size - length
    const buffer = Buffer.alloc(length)
    const { bytesRead } = await handle.read(buffer, 0, length, start)
    const view = buffer.subarray(0, bytesRead)
    let end = view.lastIndexOf(10)
    while (end >= 0) {
      const prev = end === 0 ? -1 : view.lastIndexOf(10, end - 1)
      if (prev < 0 && start > 0) break // the line may begin before this chunk
      const value = parseOrUndefined(view.toString('utf8', prev + 1, end))
      if (isRecord(value)) {
        if (value['format'] === SESSION_FORMAT) return 0
        if (typeof value['seq'] === 'number') return value['seq'] + 1
        return undefined
      }
      end = prev
    }
    if (start === 0) return undefined
    length = Math.min(length * 4, size)
  }
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
