import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startMockModel, type MockModel, type Step } from '@dsh/testkit'
import { afterAll, beforeAll, expect } from 'vitest'
import { collect, DSH_BIN, runDsh, tempDir, cleanEnv } from '../e2e/helpers/dsh.js'
import { defineLane, laneSeed, need, needRoot, rng, scaled, sh } from './lib.js'
import { expectContiguous, onlySessionId, sessionFile, storedSession } from './sessions.js'

// disk-fault lane: ENOSPC on the Nth write and EIO on the Nth fsync of the session log
// (strace fault injection, one libuv thread so N means the Nth), and a real full tmpfs.
// Contract (issue 12 items 7 and 1): a typed error printed once, the log ends on a record
// boundary, nothing written to the log after a failed fsync, no lock left, the next resume works.
const lane = defineLane('disk')
const random = rng(laneSeed('disk'))
const TYPED = /^(SESSION_WRITE_FAILED|DISK_FULL): .+/gm

let model: MockModel
beforeAll(async () => { model = await startMockModel() })
afterAll(async () => { await model.close() })

const env = (home: string) => ({ DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key', UV_THREADPOOL_SIZE: '1' })

function steps(n: number, bytes = 64): Step[] {
  const out: Step[] = []
  for (let i = 1; i <= n; i++) out.push({ toolCalls: [{ name: 'bash', arguments: { command: `head -c ${bytes} /dev/zero | tr '\\0' x; echo ${i}` } }] })
  out.push({ text: 'finished' })
  return out
}

/** A stored session to resume under faults: its log path exists, so `strace -P` can name it. */
async function seededSession() {
  const home = tempDir('dsh-rel-disk-')
  const workspace = tempDir('dsh-rel-ws-')
  model.setScript([{ text: 'seeded' }])
  const first = await runDsh(['--profile', 'headless', 'seed'], { cwd: workspace, env: env(home) })
  expect(first.code, first.stderr).toBe(0)
  const id = onlySessionId(home)!
  return { home, workspace, id, file: sessionFile(home, id) }
}

/** `dsh --resume` under strace: every write/fsync on the log traced, `inject` applied. */
async function resumeUnderStrace(s: Awaited<ReturnType<typeof seededSession>>, inject: string[]) {
  const trace = join(s.home, `strace-${Date.now()}.txt`)
  const args = ['-f', '-qq', '-o', trace, '-P', s.file, '-e', 'trace=write,writev,pwrite64,fsync,fdatasync,ftruncate',
    ...inject.flatMap((i) => ['-e', i]), DSH_BIN, '--profile', 'headless', '--resume', s.id, 'go on']
  const child = spawn('strace', args, { cwd: s.workspace, env: cleanEnv(env(s.home)), stdio: ['pipe', 'pipe', 'pipe'] })
  const result = await collect(child, { timeoutMs: 90_000 })
  return { result, calls: readFileSync(trace, 'utf8').split('\n').filter((l) => /\b(write|writev|pwrite64|fsync|fdatasync|ftruncate)\(/.test(l)) }
}

async function expectResumes(s: Awaited<ReturnType<typeof seededSession>>, where: string) {
  model.setScript([{ text: 'works again' }])
  const again = await runDsh(['--profile', 'headless', '--resume', s.id, 'after the fault'], { cwd: s.workspace, env: env(s.home) })
  expect(again.code, `${where}: the next resume failed: ${again.stderr.slice(0, 400)}`).toBe(0)
  const stored = storedSession(s.file)
  expect(stored.tornBytes, where).toBe(0)
  expectContiguous(stored.events, where)
  expect(stored.events.at(-1), where).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
}

function expectTypedOnce(stderr: string, where: string) {
  const typed = stderr.match(TYPED) ?? []
  expect(typed.length, `${where}: expected one SESSION_WRITE_FAILED/DISK_FULL line, stderr: ${stderr.slice(0, 600)}`).toBe(1)
  expect(stderr, where).not.toMatch(/\n\s+at .+:\d+:\d+/)
  expect(stderr, where).not.toContain('INTERNAL')
}

// how many writes and fsyncs a clean resume issues on the log (N is drawn below that)
let clean = { writes: 0, syncs: 0 }
lane.case('calibration: a resume under strace with no fault completes and its log calls are seen', async () => {
  need('strace')
  const s = await seededSession()
  model.setScript(steps(6))
  const { result, calls } = await resumeUnderStrace(s, [])
  expect(result.code, result.stderr.slice(0, 400)).toBe(0)
  clean = { writes: calls.filter((l) => /\b(write|writev|pwrite64)\(/.test(l)).length, syncs: calls.filter((l) => /\b(fsync|fdatasync)\(/.test(l)).length }
  expect(clean.writes).toBeGreaterThan(3)
  expect(clean.syncs).toBeGreaterThan(3)
}, 120_000)

const draws = scaled(4)
for (const fault of ['ENOSPC on write', 'EIO on fsync'] as const) {
  for (let k = 0; k < draws; k++) {
    const pick = random()
    lane.case(`${fault}, draw ${k + 1}/${draws}`, async () => {
      need('strace')
      expect(clean.writes, 'calibration did not run').toBeGreaterThan(0)
      const isWrite = fault === 'ENOSPC on write'
      const n = 1 + Math.floor(pick * ((isWrite ? clean.writes : clean.syncs) - 1))
      const where = `${fault} at call ${n}`
      const s = await seededSession()
      const before = storedSession(s.file)
      model.setScript(steps(6))
      const inject = isWrite ? `inject=write,writev,pwrite64:error=ENOSPC:when=${n}` : `inject=fsync,fdatasync:error=EIO:when=${n}`
      const { result, calls } = await resumeUnderStrace(s, [inject])
      expect(result.code, `${where}: dsh went on after the fault`).not.toBe(0)
      expectTypedOnce(result.stderr, where)
      const failed = calls.findIndex((l) => l.includes('(INJECTED)'))
      expect(failed, `${where}: the fault was not injected`).toBeGreaterThanOrEqual(0)
      if (!isWrite) {
        // no retry after a failed fsync: nothing more is written to, or fsynced on, the log
        const later = calls.slice(failed + 1).filter((l) => /\b(write|writev|pwrite64|fsync|fdatasync)\(/.test(l))
        expect(later, `${where}: the log was written or fsynced again after a failed fsync`).toEqual([])
      }
      const after = storedSession(s.file)
      expect(after.tornBytes, `${where}: the log does not end on a record boundary`).toBe(0)
      expectContiguous(after.events, where)
      expect(JSON.stringify(after.events.slice(0, before.events.length)), where).toBe(JSON.stringify(before.events))
      expect(existsSync(join(s.home, 'sessions', `${s.id}.lock`)), `${where}: lock left behind`).toBe(false)
      await expectResumes(s, where)
    }, 180_000)
  }
}

/** A real full filesystem: a small tmpfs mounted as the sessions folder. */
function fullDisk(home: string, sizeKb: number): () => void {
  const dir = join(home, 'sessions')
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  sh(`mount -t tmpfs -o size=${sizeKb}k,mode=0700 tmpfs ${dir}`)
  return () => sh(`umount ${dir}`, { allowFail: true })
}

/** Fills the filesystem of `dir` leaving about `leave` bytes (tmpfs counts whole pages). */
function fill(dir: string, leave: number): string {
  const filler = join(dir, 'filler')
  sh(`dd if=/dev/zero of=${filler} bs=4096 count=100000 2>/dev/null || true`)
  if (leave > 0) sh(`truncate -s -${Math.ceil(leave / 4096) * 4096} ${filler}`)
  return filler
}

lane.case('full tmpfs: a new session fails with a typed error, no lock and no empty log left', async () => {
  needRoot('mounting a tmpfs')
  const home = tempDir('dsh-rel-full-')
  const workspace = tempDir('dsh-rel-ws-')
  const unmount = fullDisk(home, 64)
  try {
    fill(join(home, 'sessions'), 0)
    model.setScript([{ text: 'never' }])
    const result = await runDsh(['--profile', 'headless', 'hello'], { cwd: workspace, env: env(home) })
    expect(result.code).not.toBe(0)
    expectTypedOnce(result.stderr, 'new session on a full disk')
    expect(result.stderr).toMatch(/hint|space/i)
    const left = readdirSync(join(home, 'sessions')).filter((f) => f !== 'filler')
    expect(left, 'files left on the full disk').toEqual([])
    expect(model.requests.length).toBeGreaterThanOrEqual(0)
  } finally {
    unmount()
  }
}, 120_000)

const fills = scaled(3)
for (let k = 0; k < fills; k++) {
  const leave = 4096 * (1 + Math.floor(random() * 3))
  lane.case(`full tmpfs: a resume runs out of space mid-turn (${leave} bytes left), then resumes once space is back`, async () => {
    needRoot('mounting a tmpfs')
    const home = tempDir('dsh-rel-full-')
    const workspace = tempDir('dsh-rel-ws-')
    const unmount = fullDisk(home, 256)
    try {
      model.setScript([{ text: 'seeded' }])
      expect((await runDsh(['--profile', 'headless', 'seed'], { cwd: workspace, env: env(home) })).code).toBe(0)
      const id = onlySessionId(home)!
      const s = { home, workspace, id, file: sessionFile(home, id) }
      const before = storedSession(s.file)
      const filler = fill(join(home, 'sessions'), leave)
      model.setScript(steps(20, 3000))
      const result = await runDsh(['--profile', 'headless', '--resume', id, 'write a lot'], { cwd: workspace, env: env(home) })
      expect(result.code, 'dsh completed on a full disk').not.toBe(0)
      expectTypedOnce(result.stderr, 'full tmpfs')
      let after = storedSession(s.file)
      expect(after.tornBytes, 'torn line after ENOSPC').toBe(0)
      expectContiguous(after.events, 'full tmpfs')
      expect(JSON.stringify(after.events.slice(0, before.events.length))).toBe(JSON.stringify(before.events))
      // resuming on the still-full disk adds no torn line either
      model.setScript([{ text: 'still full' }])
      const stillFull = await runDsh(['--profile', 'headless', '--resume', id, 'again'], { cwd: workspace, env: env(home) })
      after = storedSession(s.file)
      expect(after.tornBytes, `torn line after a resume on the still-full disk (exit ${stillFull.code})`).toBe(0)
      rmSync(filler)
      writeFileSync(join(workspace, 'space-is-back'), '')
      await expectResumes(s, 'after freeing space')
    } finally {
      unmount()
    }
  }, 180_000)
}
