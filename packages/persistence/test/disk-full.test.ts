import { execFileSync } from 'node:child_process'
import { mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync, closeSync, statfsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Context } from '@deepseek-ai/cordis'
import type { SessionEvent } from '@dsh/protocol'
import { JsonlSessionStore } from '../src/store.js'
import { tempDir } from './helpers.js'

// Issue 12 item 7, on a real full file system: a 64 KiB tmpfs (needs root to mount; fails, never skips, without).
let mnt: string
let cleanup: () => void
let dir: string

beforeAll(() => {
  ({ dir: mnt, cleanup } = tempDir('dsh-full-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mnt])
})
afterAll(() => {
  execFileSync('umount', ['-l', mnt])
  cleanup()
})
beforeEach(() => {
  for (const name of readdirSync(mnt)) rmSync(join(mnt, name), { recursive: true, force: true })
  dir = join(mnt, 'sessions')
  mkdirSync(dir)
})

/** Fills the file system until `leave` bytes are free (rounded to pages by tmpfs). */
function fill(leave = 0): void {
  const fd = openSync(join(mnt, 'ballast'), 'a')
  try {
    const page = Buffer.alloc(4096, 1)
    for (;;) {
      const st = statfsSync(mnt)
      if (st.bavail * st.bsize <= leave) break
      try { writeSync(fd, page) } catch { break }
    }
  } finally {
    closeSync(fd)
  }
}
const unfill = () => rmSync(join(mnt, 'ballast'), { force: true })

function store(): JsonlSessionStore {
  return new JsonlSessionStore(new Context(), { dir })
}
const header = (id: string) => ({ format: 'dsh-session' as const, version: 1, id, created: 1, cwd: '/w' })
const event = (seq: number, text: string): SessionEvent => ({ type: 'user/message', seq, time: 1, data: { text } } as SessionEvent)

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; hint?: string; data?: Record<string, unknown> }> {
  try { await promise } catch (error) { return error as Error }
  throw new Error('expected a rejection')
}

describe('a full disk', () => {
  it('a new session fails with SESSION_WRITE_FAILED (disk full, with a hint) and leaves no file and no lock', async () => {
    fill()
    const error = await rejection(store().create(header('s-new')))
    expect(error.code).toBe('SESSION_WRITE_FAILED')
    expect(error.message).toContain('the disk is full (ENOSPC)')
    expect(error.hint).toBe('free some disk space, then run again (nothing was created)')
    expect(readdirSync(dir)).toEqual([])
  })

  it('a failed append (a short write, then ENOSPC) truncates to the last record, breaks the sink, and the session resumes once there is room', async () => {
    const s = store()
    const sink = await s.create(header('s-app'))
    sink.write(event(0, 'kept'))
    await sink.flush()
    const before = readFileSync(join(dir, 's-app.jsonl'))
    fill(4096)
    sink.write(event(1, 'x'.repeat(20_000)))
    const error = await rejection(sink.flush())
    expect([error.code, error.data?.errno]).toEqual(['SESSION_WRITE_FAILED', 'ENOSPC'])
    // on disk: exactly what was acknowledged, ending on a record boundary
    expect(readFileSync(join(dir, 's-app.jsonl'))).toEqual(before)
    // no retry: the sink stays broken with the same error
    expect(() => sink.write(event(1, 'again'))).toThrow(error)
    await expect(sink.flush()).rejects.toBe(error)
    await sink.close().catch(() => undefined)
    expect(readdirSync(dir).filter((f) => f.endsWith('.lock'))).toEqual([])

    // resuming on the still-full disk adds nothing torn either
    const again = await s.open('s-app')
    expect(again.notices).toEqual([])
    again.sink.write(event(1, 'y'.repeat(20_000)))
    expect((await rejection(again.sink.flush())).code).toBe('SESSION_WRITE_FAILED')
    await again.sink.close().catch(() => undefined)
    expect(readFileSync(join(dir, 's-app.jsonl'))).toEqual(before)

    unfill()
    const resumed = await s.open('s-app')
    expect(resumed.notices).toEqual([])
    expect(resumed.events.map((e) => (e.data as { text: string }).text)).toEqual(['kept'])
    resumed.sink.write(event(1, 'after'))
    await resumed.sink.close()
    expect((await s.read('s-app')).events).toHaveLength(2)
  })
})
