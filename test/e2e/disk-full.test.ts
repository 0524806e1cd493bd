import { startMockModel, type MockModel } from '@dsh/testkit'
import { execFileSync } from 'node:child_process'
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, statfsSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { runDsh, tempDir } from './helpers/dsh.js'

// Issue 12 item 7 through the built binary: a real 256 KiB tmpfs holds $DSH_HOME (root only; fails without).
let model: MockModel
let mnt: string
let home: string
let workspace: string

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
const sessionsDir = () => join(home, 'sessions')
const headless = (args: string[]) => runDsh(['--profile', 'headless', ...args], {
  cwd: workspace, env: { DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key' },
})

beforeAll(async () => {
  model = await startMockModel()
  mnt = tempDir('dsh-fullhome-')
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mnt])
})
afterAll(async () => {
  await model.close()
  execFileSync('umount', ['-l', mnt])
})
beforeEach(async () => {
  for (const name of readdirSync(mnt)) rmSync(join(mnt, name), { recursive: true, force: true })
  home = join(mnt, 'home')
  workspace = tempDir('dsh-ws-')
  // the profile is created while there is room
  expect((await runDsh(['--profile', 'headless', '--dump-config'], { env: { DSH_HOME: home } })).code).toBe(0)
  model.requests.length = 0
})

describe('a full disk under dsh', () => {
  it('a first run that must create its profile: PROFILE_WRITE_FAILED with a hint, no half-made profile', async () => {
    rmSync(join(home, 'profiles'), { recursive: true })
    fill(0)
    const run = await headless(['hi'])
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/^PROFILE_WRITE_FAILED: creating profile headless in .* failed: the disk is full \(ENOSPC\)\n {2}hint: free some disk space, then run again\n$/)
    expect(readdirSync(join(home, 'profiles'))).toEqual([])
  })

  it('a new session: one SESSION_WRITE_FAILED line with a hint, exit 1, nothing left in sessions/', async () => {
    model.setScript([{ text: 'never asked' }])
    fill(0)
    const run = await headless(['hi'])
    expect(run.code).toBe(1)
    expect(run.stderr.match(/SESSION_WRITE_FAILED/g)).toHaveLength(1)
    expect(run.stderr).toMatch(/the disk is full \(ENOSPC\)\n {2}hint: free some disk space/)
    expect(run.stderr).not.toMatch(/INTERNAL|\n\s+at /)
    expect(existsSync(sessionsDir()) ? readdirSync(sessionsDir()) : []).toEqual([])
    expect(model.requests).toEqual([])
  })

  it('mid-turn: the error is printed once, the log ends on a record boundary, no lock is left, and the session resumes after space is freed', async () => {
    model.setScript([{ text: 'z'.repeat(60_000) }])
    fill(12 * 1024)
    const run = await headless(['hi'])
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
    model.setScript([{ text: 'resumed' }])
    const resumed = await headless(['--resume', log.slice(0, -'.jsonl'.length), 'again'])
    expect(resumed.stdout).toBe('resumed\n')
    expect(resumed.code).toBe(0)
  })
})
