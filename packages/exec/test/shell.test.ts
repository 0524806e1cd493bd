import { existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { isDshError } from '@dsh/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as sandboxPlugin from '../src/plugins/sandbox.js'
import * as shellPlugin from '../src/plugins/shell.js'
import * as subprocessPlugin from '../src/plugins/subprocess.js'
import { NON_INTERACTIVE } from '../src/shell/env.js'
import { cleanupDirs, execTree, policyFor, processesInGroup, tempDir, until } from './helpers.js'

let root: Context
let ws: string
let tmp: string

beforeAll(async () => {
  root = await execTree({ shell: { maxBytes: 2000, maxLines: 50 } })
  ws = tempDir('ws')
  tmp = tempDir('tmproot')
})
afterAll(cleanupDirs)

const ww = () => policyFor('workspace-write', ws, tmp)

describe('ctx.shell.run', () => {
  it('runs a fresh non-login bash per call in the sandbox and reports the exit', async () => {
    const first = await root.shell.run('cd /; X=1; echo "$PWD $0"; shopt -q login_shell || echo non-login; [[ $- == *i* ]] || echo non-interactive; exit 4', { policy: ww() })
    expect(first).toEqual({ output: '/ bash\nnon-login\nnon-interactive\n', exitCode: 4, signal: null, aborted: false, sandboxDenied: false, mode: 'workspace-write' })
    const second = await root.shell.run('echo "$PWD x${X}x"', { policy: ww() })
    expect(second.output).toBe(`${ws} xx\n`)
  })

  it('scrubs secrets from the environment and sets non-interactive settings', async () => {
    process.env.DSH_TEST_INTERNAL = 'internal'
    process.env.SOME_API_KEY = 'sk-secret'
    process.env.HARMLESS_SETTING = 'kept'
    const more = { MYSQL_PWD: 'pw', GH_PAT: 'ghp_x', SENTRY_DSN: 'https://k@sentry.io/1', DATABASE_URL: 'postgres://u:pw@db/x', PLAIN_URL: 'https://example.com/a' }
    Object.assign(process.env, more)
    try {
      const names = ['DSH_TEST_INTERNAL', 'SOME_API_KEY', 'HARMLESS_SETTING', ...Object.keys(more), 'TMPDIR', ...Object.keys(NON_INTERACTIVE)]
      const script = names.map((n) => `echo "${n}=\${${n}-unset}"`).join('; ')
      const { output } = await root.shell.run(script, { policy: ww(), env: { EXPLICIT: '1' } })
      expect(output).toBe([
        'DSH_TEST_INTERNAL=unset', 'SOME_API_KEY=unset', 'HARMLESS_SETTING=kept',
        'MYSQL_PWD=unset', 'GH_PAT=unset', 'SENTRY_DSN=unset', 'DATABASE_URL=unset', 'PLAIN_URL=https://example.com/a', `TMPDIR=${tmp}`,
        ...Object.entries(NON_INTERACTIVE).map(([k, v]) => `${k}=${v}`),
      ].join('\n') + '\n')
    } finally {
      delete process.env.DSH_TEST_INTERNAL
      delete process.env.SOME_API_KEY
      delete process.env.HARMLESS_SETTING
      for (const name of Object.keys(more)) delete process.env[name]
    }
  })

  it('streams output and flags a sandbox denial', async () => {
    const chunks: string[] = []
    const outside = tempDir('outside')
    const result = await root.shell.run(`echo start; touch ${outside}/f`, { policy: ww(), onData: (t) => chunks.push(t) })
    expect(result).toMatchObject({ exitCode: 1, sandboxDenied: true })
    expect(chunks.join('')).toBe(result.output)
    expect(existsSync(path.join(outside, 'f'))).toBe(false)
    const unconfined = await root.shell.run(`touch ${outside}/f`, { policy: policyFor('danger-full-access', ws, tmp) })
    expect(unconfined).toMatchObject({ exitCode: 0, sandboxDenied: false, mode: 'danger-full-access' })
    expect(existsSync(path.join(outside, 'f'))).toBe(true)
  })

  it('times out a SIGTERM-ignoring command with a grandchild, in the sandbox, leaving no process', async () => {
    const nap = `60.${process.pid}`
    const result = await root.shell.run(`trap "" TERM; (trap "" TERM; sleep ${nap}) & echo $$ > pid; sleep ${nap}`, { policy: ww(), timeoutMs: 1000 })
    // in a shared sandbox the command ignores TERM and dies of the SIGKILL after the grace, as
    // unsandboxed; a bubblewrap per call (the group's leader) dies of the TERM itself (0092)
    expect(result).toEqual({ output: '', exitCode: null, signal: expect.stringMatching(/^SIG(TERM|KILL)$/) as string, timedOutMs: 1000, aborted: false, sandboxDenied: false, mode: 'workspace-write' })
    expect(readFileSync(path.join(ws, 'pid'), 'utf8')).toMatch(/^\d+\n$/)
    const out = await root.shell.run(`ps -eo args= | grep -c '^[s]leep ${nap}' || true`, { policy: policyFor('danger-full-access', ws, tmp) })
    expect(out.output).toBe('0\n')
  })

  it('keeps memory bounded on huge output and spills all of it to a 0600 file', async () => {
    const before = process.memoryUsage()
    const result = await root.shell.run('yes "a line of output" | head -c 200000000; echo; echo last', { policy: ww(), timeoutMs: 120_000 })
    const after = process.memoryUsage()
    expect(after.rss - before.rss).toBeLessThan(100_000_000)
    expect(result.exitCode).toBe(0)
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(2000)
    expect(result.output.endsWith('\nlast\n')).toBe(true)
    const t = result.truncation!
    expect(t.totalBytes).toBe(200_000_000 + 6)
    expect(path.dirname(t.spillPath)).toBe(tmp)
    expect(statSync(t.spillPath).size).toBe(t.totalBytes)
    expect(statSync(t.spillPath).mode & 0o777).toBe(0o600)
  })

  it('refuses to run when the mode needs a sandbox and none works', async () => {
    const closed = await execTree({ sandbox: { mechanism: 'none' } })
    const error = await closed.shell.run('touch should-not-exist', { policy: ww() }).then(() => null, (e: unknown) => e)
    expect(isDshError(error, 'SANDBOX_UNAVAILABLE')).toBe(true)
    expect(existsSync(path.join(ws, 'should-not-exist'))).toBe(false)
  })
})

describe('ctx.shell jobs', () => {
  it('collects output of a background job, hands out only new output, and kills its group', async () => {
    const job = await root.shell.start('echo one; sleep 0.3; echo two; trap "" TERM; sleep 60', { policy: ww(), owner: 's1' })
    expect(job).toMatchObject({ id: expect.stringMatching(/^job-\d+$/), command: expect.any(String), cwd: ws, owner: 's1', mode: 'workspace-write' })
    const next = async () => {
      for (;;) {
        const read = root.shell.output(job.id, 's1')
        if (read.output) return read
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    expect(await next()).toMatchObject({ running: true, output: 'one\n', droppedBytes: 0 })
    expect(await next()).toMatchObject({ running: true, output: 'two\n', droppedBytes: 0 })
    expect(root.shell.jobs('s1').map((j) => j.id)).toEqual([job.id])
    expect(() => root.shell.output(job.id, 'other-session')).toThrow(/No background job/)
    const final = await root.shell.kill(job.id, 's1')
    expect(final).toMatchObject({ running: false, output: '', signal: expect.stringMatching(/^SIG/) })
    expect(processesInGroup(job.pid!)).toEqual([])
  })

  it('jobs die with the shell plugin', async () => {
    const tree = new Context()
    await tree.plugin(subprocessPlugin, subprocessPlugin.Config.parse({ killGraceMs: 200 }))
    await tree.plugin(sandboxPlugin, sandboxPlugin.Config.parse({}))
    const fiber = await tree.plugin(shellPlugin, shellPlugin.Config.parse({}))
    const job = await tree.shell.start('trap "" TERM; sleep 60', { policy: ww() })
    await until(() => processesInGroup(job.pid!).length > 0)
    await fiber.dispose()
    expect(processesInGroup(job.pid!)).toEqual([])
    expect(tree.shell).toBeUndefined()
  })
})
