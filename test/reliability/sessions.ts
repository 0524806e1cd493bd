import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { repairEvents } from '@dsh/core'
import type { SessionEvent } from '@dsh/protocol'
import { expect } from 'vitest'

/** The events a `--json` run printed: complete lines only (a line cut by a kill was never shown whole). */
export function printedEvents(stdout: string): SessionEvent[] {
  const lines = stdout.split('\n')
  lines.pop()
  return lines.filter((l) => l.length > 0).map((l) => JSON.parse(l) as SessionEvent)
}

export interface StoredSession { header: Record<string, unknown>; events: SessionEvent[]; tornBytes: number; raw: Buffer }

/** A session file read raw: every complete line must parse; a trailing partial line is reported as torn bytes. */
export function storedSession(file: string): StoredSession {
  const raw = readFileSync(file)
  const text = raw.toString('utf8')
  const end = text.lastIndexOf('\n') + 1
  const lines = text.slice(0, end).split('\n').filter((l) => l.length > 0)
  const [header, ...rest] = lines
  if (header === undefined) throw new Error(`${file}: no header line`)
  return {
    header: JSON.parse(header) as Record<string, unknown>,
    events: rest.map((l, i) => {
      try {
        return JSON.parse(l) as SessionEvent
      } catch {
        throw new Error(`${file}: line ${i + 2} is not JSON (a torn line before the end): ${l.slice(0, 120)}`)
      }
    }),
    tornBytes: Buffer.byteLength(text.slice(end)),
    raw,
  }
}

export function sessionFile(home: string, id: string): string {
  return join(home, 'sessions', `${id}.jsonl`)
}

/** The one session of a fresh home (the id is also on stderr, but a kill may come before it). */
export function onlySessionId(home: string): string | undefined {
  const dir = join(home, 'sessions')
  if (!existsSync(dir)) return undefined
  const ids = readdirSync(dir).filter((f) => f.endsWith('.jsonl')).map((f) => f.slice(0, -'.jsonl'.length))
  if (ids.length > 1) throw new Error(`expected one session in ${dir}, found ${ids.join(', ')}`)
  return ids[0]
}

export function expectContiguous(events: readonly SessionEvent[], where: string): void {
  const bad = events.findIndex((e, i) => e.seq !== i)
  expect(bad, `${where}: event ${bad} has seq ${events[bad]?.seq}`).toBe(-1)
}

/** Zero acknowledged events lost: every event a client was shown is in the file, identical, at its seq. */
export function expectShownAreStored(shown: readonly SessionEvent[], stored: readonly SessionEvent[], where: string): void {
  const lost = shown.filter((e) => JSON.stringify(stored[e.seq]) !== JSON.stringify(e))
  expect(lost.map((e) => `${e.seq} ${e.type}`), `${where}: shown on stdout but not in the session log`).toEqual([])
}

/** Call ids of tool calls with no tool/result in `events`. */
export function orphanCalls(events: readonly SessionEvent[]): string[] {
  const results = new Set(events.filter((e) => e.type === 'tool/result').map((e) => (e.data as { callId: string }).callId))
  return events.filter((e) => e.type === 'tool/call').map((e) => (e.data as { callId: string }).callId).filter((id) => !results.has(id))
}

/** After a resume: nothing left open, every orphan of the crash got a synthetic error result. */
export function expectRepaired(crashed: readonly SessionEvent[], after: readonly SessionEvent[], where: string): void {
  expect(repairEvents(after), `${where}: the log still has something open after resume`).toEqual([])
  for (const id of orphanCalls(crashed)) {
    const result = after.find((e) => e.type === 'tool/result' && (e.data as { callId: string }).callId === id)
    expect(result?.data, `${where}: orphan call ${id} not marked`).toMatchObject({ isError: true, synthetic: true })
  }
  const openTurn = repairEvents(crashed).some((r) => r.type === 'turn/end')
  if (openTurn) expect(after.some((e) => e.type === 'turn/end' && (e.data as { reason: string }).reason === 'interrupted'), `${where}: no interrupted turn/end`).toBe(true)
  // idempotent: repairing what the repair produced adds nothing
  const once = [...crashed, ...repairEvents(crashed).map((r, i) => ({ ...r, seq: crashed.length + i, time: 0 }) as SessionEvent)]
  expect(repairEvents(once), `${where}: repair is not idempotent`).toEqual([])
}
