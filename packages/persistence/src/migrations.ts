import type { Json } from '@dsh/protocol'

type JsonRecord = { [key: string]: Json }

/** A stored log as parsed lines, before it is trusted: `header` is null when the layout has none. */
export interface StoredLog {
  header: JsonRecord | null
  events: JsonRecord[]
}

/** One step of the format: a pure function from version `from` to `from + 1`. */
export interface Migration {
  from: number
  describe: string
  /** `id` is the session id taken from the file name (layouts without a header need it). */
  migrate(log: StoredLog, context: { id: string }): StoredLog
}

/**
 * Version 0 is the pre-release layout: no header line, one event per line, `seq` optional.
 * Migrating infers the header: id from the file name, cwd '' (unknown: the layout never
 * recorded it, and guessing '/' would make a resumed session's workspace the whole
 * filesystem; a session with no recorded workspace uses the process's cwd), created from
 * the first event's time (0 when empty); seq is assigned from the line order.
 */
const v0ToV1: Migration = {
  from: 0,
  describe: 'add the header line (id from the file name, workspace unknown) and number the events',
  migrate(log, { id }) {
    const first = log.events[0]?.['time']
    const header: JsonRecord = {
      format: 'dsh-session', version: 1, id, created: typeof first === 'number' ? first : 0, cwd: '',
    }
    const events = log.events.map((event, seq): JsonRecord => {
      const out: JsonRecord = { type: event['type'] ?? null, seq, time: event['time'] ?? 0, data: event['data'] ?? null }
      if (event['ignorable'] === true) out['ignorable'] = true
      return out
    })
    return { header, events }
  },
}

/** The registry: `MIGRATIONS.get(v)` lifts a version-v log to version v + 1. */
export const MIGRATIONS: ReadonlyMap<number, Migration> = new Map([[v0ToV1.from, v0ToV1]])

/** Applies every migration from `from` up to `to`; throws when a step is missing. */
export function migrateLog(log: StoredLog, from: number, to: number, context: { id: string }): StoredLog {
  let current = log
  for (let version = from; version < to; version++) {
    const step = MIGRATIONS.get(version)
    if (!step) throw new Error(`no migration from session format version ${version}`)
    current = step.migrate(current, context)
  }
  return current
}
