import type { Context } from '@deepseek-ai/cordis'
import { isDshError } from '@dsh/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupDirs, execTree, processesInGroup, tempDir, until } from './helpers.js'

let root: Context
let cwd: string

beforeAll(async () => {
  root = await execTree()
  cwd = tempDir('sub')
})
afterAll(cleanupDirs)

async function run(script: string, options: { timeoutMs?: number; signal?: AbortSignal; onSpawn?: (pid: number) => void } = {}) {
  let output = ''
  const result = await root.subprocess.run(['bash', '-c', script], { cwd, ...options, onData: (c) => { output += c.toString() } })
  return { ...result, output }
}

// A leader that ignores SIGTERM and a grandchild (in a subshell) that ignores it too.
const STUBBORN = 'trap "" TERM; (trap "" TERM; while :; do sleep 0.05; done) & echo started; while :; do sleep 0.05; done'

describe('ctx.subprocess', () => {
  it('reports exit codes and merges stdout and stderr in order', async () => {
    expect(await run('echo one; echo two >&2; echo three; exit 3'))
      .toEqual({ exitCode: 3, signal: null, timedOut: false, aborted: false, output: 'one\ntwo\nthree\n' })
  })

  it('reports the signal that ended the leader', async () => {
    expect(await run('kill -KILL $$')).toEqual({ exitCode: null, signal: 'SIGKILL', timedOut: false, aborted: false, output: '' })
  })

  it('closes stdin', async () => {
    expect(await run('cat; echo done')).toMatchObject({ exitCode: 0, output: 'done\n' })
  })

  it('on timeout sends SIGTERM then SIGKILL to the whole group: no orphan survives', async () => {
    let pgid = 0
    const result = await run(STUBBORN, { timeoutMs: 1000, onSpawn: (pid) => { pgid = pid } })
    expect(result).toEqual({ exitCode: null, signal: 'SIGKILL', timedOut: true, aborted: false, output: 'started\n' })
    expect(pgid).toBeGreaterThan(0)
    expect(processesInGroup(pgid)).toEqual([])
  })

  it('on abort does the same', async () => {
    const controller = new AbortController()
    let pgid = 0
    const pending = run(STUBBORN, { signal: controller.signal, onSpawn: (pid) => { pgid = pid } })
    await until(() => pgid > 0 && processesInGroup(pgid).length >= 2)
    controller.abort()
    expect(await pending).toEqual({ exitCode: null, signal: 'SIGKILL', timedOut: false, aborted: true, output: 'started\n' })
    expect(processesInGroup(pgid)).toEqual([])
  })

  it('kills what a finished leader left running in its group', async () => {
    let pgid = 0
    const result = await run('sleep 30 & echo left', { onSpawn: (pid) => { pgid = pid } })
    expect(result).toEqual({ exitCode: 0, signal: null, timedOut: false, aborted: false, output: 'left\n' })
    expect(processesInGroup(pgid)).toEqual([])
  })

  it('kills a leftover that does not hold the output pipe before settling', async () => {
    let pgid = 0
    const result = await run('sleep 30 >/dev/null 2>&1 & echo detached-output', { onSpawn: (pid) => { pgid = pid } })
    expect(result).toEqual({ exitCode: 0, signal: null, timedOut: false, aborted: false, output: 'detached-output\n' })
    expect(processesInGroup(pgid)).toEqual([])
  })

  it('SIGTERM suffices for a cooperative command', async () => {
    expect(await run('sleep 30', { timeoutMs: 100 })).toEqual({ exitCode: null, signal: 'SIGTERM', timedOut: true, aborted: false, output: '' })
  })

  it('does not start when already aborted, and fails with SPAWN_FAILED for a missing cwd', async () => {
    const controller = new AbortController()
    controller.abort()
    expect(await run('echo no', { signal: controller.signal })).toEqual({ exitCode: null, signal: null, timedOut: false, aborted: true, output: '' })
    const error = await root.subprocess.run(['true'], { cwd: '/nonexistent/dir' }).then(() => null, (e: unknown) => e)
    expect(isDshError(error, 'SPAWN_FAILED')).toBe(true)
  })

  it('reports a missing program as exit 127', async () => {
    let output = ''
    const result = await root.subprocess.run(['definitely-not-a-program-xyz'], { cwd, onData: (c) => { output += c.toString() } })
    expect(result.exitCode).toBe(127)
    expect(output).toContain('definitely-not-a-program-xyz')
  })
})
