import { execFileSync } from 'node:child_process'
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, statfsSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { runDsh, tempDir } from './helpers/dsh.js'
import { useDshWorld } from './helpers/world.js'

// Issue 12 item 7 through the built binary: a real 256 KiB tmpfs holds $DSH_HOME (root only; fails without).
let mnt: string
const world = useDshWorld({ logsCheck: false, home: () => join(mnt, 'home') })

function fill(leave: number): void {
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
const sessionsDir = () => join(world.home, 'sessions')

beforeAll(() => {
  mnt = tempDir('dsh-fullhome-')
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mnt])
})
afterAll(() => {
  execFileSync('umount', ['-l', mnt])
})
beforeEach(async () => {
  // the last test's home and ballast go; then the profile is created while there is room
  for (const name of readdirSync(mnt)) rmSync(join(mnt, name), { recursive: true, force: true })
  expect((await runDsh(['--profile', 'headless', '--dump-config'], { env: { DSH_HOME: world.home } })).code).toBe(0)
})

describe('a full disk under dsh', () => {
  it('a first run that must create its profile: PROFILE_WRITE_FAILED with a hint, no half-made profile', async () => {
    rmSync(join(world.home, 'profiles'), { recursive: true })
    fill(0)
    const run = await world.headless(['hi'])
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/^PROFILE_WRITE_FAILED: creating profile headless in .* failed: the disk is full \(ENOSPC\)\n {2}hint: free some disk space, then run again\n$/)
    expect(readdirSync(join(world.home, 'profiles'))).toEqual([])
  })

  it('a new session: one SESSION_WRITE_FAILED line with a hint, exit 1, nothing left in sessions/', async () => {
    world.model.setScript([{ text: 'never asked' }])
    fill(0)
    const run = await world.headless(['hi'])
    expect(run.code).toBe(1)
    expect(run.stderr.match(/SESSION_WRITE_FAILED/g)).toHaveLength(1)
    expect(run.stderr).toMatch(/the disk is full \(ENOSPC\)\n {2}hint: free some disk space/)
    expect(run.stderr).not.toMatch(/INTERNAL|\n\s+at /)
    expect(existsSync(sessionsDir()) ? readdirSync(sessionsDir()) : []).toEqual([])
    expect(world.model.requests).toEqual([])
  })

  it('mid-turn: the error is printed once, the log ends on a record boundary, no lock is left, and the session resumes after space is freed', async () => {
    world.model.setScript([{ text: 'z'.repeat(60_000) }])
    fill(12 * 1024)
    const run = await world.headless(['hi'])
    expect(run.code).not.toBe(0)
    expect(run.stderr.match(/SESSION_WRITE_FAILED/g)).toHaveLength(1)
    expect(run.stderr).toMatch(/writing the log failed: the disk is full \(ENOSPC\)\n {2}hint: free some disk space, then resume the session/)
    expect(run.stderr).not.toMatch(/INTERNAL|\n\s+at /)
    const files = readdirSync(sessionsDir())
    expect(files.filter((f) => f.endsWith('.lock'))).toEqual([])
    const log = files.find((f) => f.endsWith('.jsonl'))!
    const text = readFileSync(join(sessionsDir(), log), 'utf8')
    expect(text.endsWith('\n')).toBe(true)
    for (const line of text.split('\n').slice(0, -1)) JSON.parse(line)
    rmSync(join(mnt, 'ballast'))
    world.model.setScript([{ text: 'resumed' }])
    const resumed = await world.headless(['--resume', log.slice(0, -'.jsonl'.length), 'again'])
    expect(resumed.stdout).toBe('resumed\n')
    expect(resumed.code).toBe(0)
  })
})
