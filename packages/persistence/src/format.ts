import { DshError, SESSION_FORMAT_VERSION } from '@dsh/protocol'
import type { Json, SessionEvent, SessionHeader } from '@dsh/protocol'
import { migrateLog } from './migrations.js'
import type { StoredLog } from './migrations.js'

type JsonRecord = { [key: string]: Json }

export const SESSION_FORMAT = 'dsh-session'

/** The result of parsing one session file (pure; no I/O). */
export interface ParsedSession {
  header: SessionHeader
  events: SessionEvent[]
  /** The stored format version (before migration). */
  version: number
  /** Bytes at the start of the file that hold complete, valid lines: truncate to this before appending. */
  validBytes: number
  /** Bytes dropped from the end (a torn last line); 0 when none. */
  tornBytes: number
  /** Human-readable lines about what parsing did (a torn line dropped). The caller reports a migration. */
  notices: string[]
}

export function serializeHeader(header: SessionHeader): string {
  return JSON.stringify(header) + '\n'
}

export function serializeEvent(event: SessionEvent): string {
  return JSON.stringify(event) + '\n'
}

function corrupt(file: string, message: string, line?: number): DshError {
  const where = line === undefined ? file : `${file}:${line}`
  return new DshError('SESSION_CORRUPT', `${where}: ${message}`, {
    hint: 'the session file was changed by something other than dsh; restore it from a backup or fork what is readable',
    data: { file, ...(line === undefined ? {} : { line }) },
  })
}

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Parses a session file's bytes. Framing splits on `\n` only (U+2028/U+2029 inside strings
 * are data). Rules:
 * - the bytes after the last `\n` are a torn write: dropped (tornBytes, a notice);
 * - an unparsable last complete line is also a torn write: dropped the same way;
 * - an unparsable line anywhere else, or an event of the wrong shape or seq, is
 *   SESSION_CORRUPT naming `file:line` (1-based);
 * - the first line is the header (`format: 'dsh-session'`); a first line that is an event
 *   means version 0 (no header). A version above SESSION_FORMAT_VERSION is SESSION_VERSION;
 *   an older one is migrated forward in memory (see `MIGRATIONS`; `version` tells).
 * `id` (from the file name) is used by migrations and checked against the header.
 */
export function parseSessionFile(bytes: Uint8Array, file: string, id: string): ParsedSession {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const notices: string[] = []
  const end = buffer.lastIndexOf(10) + 1
  let tornBytes = buffer.length - end
  let validBytes = end
  const lines = end === 0 ? [] : buffer.toString('utf8', 0, end - 1).split('\n')

  const values: unknown[] = new Array(lines.length)
  for (let i = 0; i < lines.length; i++) {
    try {
      values[i] = JSON.parse(lines[i]!)
    } catch (error) {
      if (i < lines.length - 1) throw corrupt(file, `line is not JSON (${(error as Error).message})`, i + 1)
      // The last complete line alone may be a torn write that happened to end in "\n".
      const dropped = Buffer.byteLength(lines[i]!) + 1
      validBytes -= dropped
      tornBytes += dropped
      values.length = i
    }
  }
  if (tornBytes > 0) {
    notices.push(`dropped a torn last line (${tornBytes} bytes) from ${file}: the process stopped while writing it`)
  }
  if (values.length === 0) throw corrupt(file, 'the file holds no header line')

  const first = values[0]
  let version: number
  let header: JsonRecord | null
  if (isRecord(first) && first['format'] === SESSION_FORMAT) {
    const v = first['version']
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw corrupt(file, `header has an invalid version ${JSON.stringify(v)}`, 1)
    if (v > SESSION_FORMAT_VERSION) {
      throw new DshError('SESSION_VERSION',
        `${file} was written in session format version ${v}; this dsh reads versions up to ${SESSION_FORMAT_VERSION}`, {
          hint: 'upgrade dsh to open this session', data: { file, version: v },
        })
    }
    version = v
    header = first
  } else if (isRecord(first) && typeof first['type'] === 'string') {
    version = 0
    header = null
  } else {
    throw corrupt(file, 'the first line is neither a dsh-session header nor an event', 1)
  }

  const start = header ? 1 : 0
  const raw = values.slice(start) as JsonRecord[]
  for (let i = 0; i < raw.length; i++) {
    const value: unknown = raw[i]
    const ok = version === 0
      ? isRecord(value) && typeof value['type'] === 'string'
      : isRecord(value) && typeof value['type'] === 'string' && value['seq'] === i && typeof value['time'] === 'number' && 'data' in value
    if (!ok) {
      const seq = isRecord(value) ? value['seq'] : undefined
      const why = isRecord(value) && typeof seq === 'number' && seq !== i ? `event has seq ${seq} where ${i} was expected` : 'line is not a session event {type, seq, time, data}'
      throw corrupt(file, why, start + i + 1)
    }
  }

  let log: StoredLog = { header, events: raw }
  if (version < SESSION_FORMAT_VERSION) {
    log = migrateLog(log, version, SESSION_FORMAT_VERSION, { id })
  }
  const migrated = log.header!
  if (typeof migrated['id'] !== 'string' || typeof migrated['cwd'] !== 'string' || typeof migrated['created'] !== 'number') {
    throw corrupt(file, 'header lacks id, cwd or created', 1)
  }
  if (migrated['id'] !== id) throw corrupt(file, `header names session ${migrated['id']}, not ${id}`, 1)
  return {
    header: migrated as unknown as SessionHeader,
    events: log.events as unknown as SessionEvent[],
    version, validBytes, tornBytes, notices,
  }
}
