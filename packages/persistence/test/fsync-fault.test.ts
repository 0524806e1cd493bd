import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildWriter, tempDir } from './helpers.js'

// Issue 12 item 7 with strace fault injection (strace must be installed; the test fails without it).
let work: { dir: string; cleanup: () => void }
let script: string

beforeAll(async () => {
  execFileSync('strace', ['-V'])
  work = tempDir('dsh-fsync-')
  script = await buildWriter(work.dir, 'fsync-fault')
})
afterAll(() => work.cleanup())

/** Runs the fixture under strace, failing the Nth `syscall` on the session log with `errno`. */
function faulted(id: string, syscall: 'fsync' | 'write', errno: string, when: number) {
  const dir = join(work.dir, id)
  const log = join(dir, `${id}.jsonl`)
  // -P: only calls on the log (by path or descriptor); one libuv thread, so `when` counts this file's calls in order
  const run = spawnSync('strace', ['-f', '-qq', '-o', '/dev/null', '-P', log, '-e', `trace=${syscall}`, '-e', `inject=${syscall}:error=${errno}:when=${when}`, process.execPath, script, dir, id], {
    env: { ...process.env, UV_THREADPOOL_SIZE: '1' }, encoding: 'utf8', timeout: 60_000,
  })
  expect(run.status, run.stderr).toBe(0)
  return { report: JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { first: string; second: string }, log }
}

describe('injected faults on the session log', () => {
  it.each([
    ['fsync', 'EIO'], ['write', 'ENOSPC'], ['write', 'EIO'],
  ] as const)('a failed %s (%s) of a batch: a typed error, the file back on the last acknowledged record, no retry', (syscall, errno) => {
    // call 1 is the header's, 2 the first flush's, 3 the batch's
    const { report, log } = faulted(`s-${syscall}-${errno.toLowerCase()}`, syscall, errno, 3)
    expect(report).toEqual({ first: `SESSION_WRITE_FAILED:${errno}`, second: 'SESSION_WRITE_FAILED' })
    expect(existsSync(`${log.slice(0, -'.jsonl'.length)}.lock`)).toBe(false)
    const lines = readFileSync(log, 'utf8').split('\n')
    expect(lines.at(-1)).toBe('')
    expect(lines.slice(0, -1).map((l) => (JSON.parse(l) as { type?: string; format?: string }).type ?? 'header')).toEqual(['header', 'turn/start'])
  })
})
