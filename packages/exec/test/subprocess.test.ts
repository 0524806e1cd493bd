import type { Context } from '@deepseek-ai/cordis'
import { isDshError } from '@dsh/protocol'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupDirs, execTree, processesInGroup, tempDir, until } from './helpers.js'

// The same contract on both launchers: the spawner (0080) and Node's own spawn (its fallback).
describe.each([
  ['the spawner', {}],
  ['Node spawn (fallback)', { perlPath: '' }],
])('ctx.subprocess through %s', (_label, subprocess) => {
  let root: Context
  let cwd: string

  beforeAll(async () => {
    root = await execTree({ subprocess })
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
    it('passes argv and env bytes exactly: newlines, quotes, non-ASCII, lone surrogates', async () => {
      const args = ['a\nb', ' ', '', "'\"$x`", 'é\u00ff\u{1F600}', '\uD800']
      const env = { ONE: 'x\ny', 'TWO.dots': '\u00ff', EMPTY: '', SKIP: undefined }
      const chunks: Buffer[] = []
      const result = await root.subprocess.run(['node', '-e', 'process.stdout.write(JSON.stringify([process.argv.slice(1), process.env]))', ...args], {
        cwd, env: { ...env, PATH: process.env.PATH }, onData: (c) => chunks.push(c),
      })
      expect(result.exitCode).toBe(0)
      const [gotArgs, gotEnv] = JSON.parse(Buffer.concat(chunks).toString('utf8')) as [string[], Record<string, string>]
      // a lone surrogate is not encodable: both launchers send U+FFFD, as Node does
      expect(gotArgs).toEqual([...args.slice(0, 5), '\uFFFD'])
      // exactly the given environment: nothing inherited (node adds nothing either)
      expect(gotEnv).toEqual({ ONE: 'x\ny', 'TWO.dots': '\u00ff', EMPTY: '', PATH: process.env.PATH })
    })

    it('refuses NUL in argv, env or cwd with a clear SPAWN_FAILED, starting nothing', async () => {
      for (const [argv, env, dir] of [[['echo', 'a\0b'], undefined, cwd], [['echo'], { A: 'x\0' }, cwd], [['echo'], { 'A\0B': 'x' }, cwd], [['echo'], undefined, `${cwd}\0x`]] as const) {
        const error = await root.subprocess.run([...argv], { cwd: dir, ...(env ? { env } : {}) }).then(() => null, (e: unknown) => e)
        expect(isDshError(error, 'SPAWN_FAILED')).toBe(true)
        expect((error as Error).message).toMatch(/NUL byte/)
      }
    })

    it('fails with SPAWN_FAILED and the reason when the program is missing or not executable', async () => {
      const missing = await root.subprocess.run(['definitely-not-a-program-xyz'], { cwd }).then(() => null, (e: unknown) => e)
      expect(isDshError(missing, 'SPAWN_FAILED')).toBe(true)
      expect((missing as { data: { errno: string } }).data.errno).toBe('ENOENT')
      expect((missing as Error).message).toContain('definitely-not-a-program-xyz')
      writeFileSync(path.join(cwd, 'noexec'), '#!/bin/sh\necho ran\n', { mode: 0o644 })
      const denied = await root.subprocess.run([path.join(cwd, 'noexec')], { cwd }).then(() => null, (e: unknown) => e)
      expect(isDshError(denied, 'SPAWN_FAILED')).toBe(true)
      expect((denied as { data: { errno: string } }).data.errno).toBe('EACCES')
    })

    it('gives the command default signal dispositions and an empty mask (SIGPIPE not ignored)', async () => {
      let output = ''
      await root.subprocess.run(['grep', '-E', '^Sig(Blk|Ign)', '/proc/self/status'], { cwd, onData: (c) => { output += c.toString() } })
      expect(output).toBe('SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n')
      expect(await run('yes | head -c 1; echo " ${PIPESTATUS[0]}"')).toMatchObject({ exitCode: 0, output: 'y 141\n' })
    })

    it('runs many commands in parallel, each with its own output and exit', async () => {
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => run(`printf '%s' ${i}; exit ${i % 7}`)))
      results.forEach((r, i) => expect(r).toEqual({ exitCode: i % 7, signal: null, timedOut: false, aborted: false, output: String(i) }))
    })

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
  })
})
