import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import { isDshError } from '@dsh/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { unixSocketFilter, unixSocketFilterFile } from '../src/sandbox/seccomp.js'
import { Bubblewrap } from '../src/sandbox/bubblewrap.js'
import { candidates } from '../src/plugins/sandbox.js'
import { cleanupDirs, execTree, policyFor, tempDir } from './helpers.js'

let root: Context
let ws: string
let tmp: string
let outside: string

beforeAll(async () => {
  root = await execTree()
  ws = tempDir('ws')
  tmp = tempDir('tmproot')
  outside = tempDir('outside')
})
afterAll(cleanupDirs)

async function sh(script: string, policy = policyFor('workspace-write', ws, tmp)) {
  let output = ''
  const argv = await root.sandbox.wrap(['bash', '-c', script], policy)
  const result = await root.subprocess.run(argv, { cwd: ws, onData: (c) => { output += c.toString() } })
  return { code: result.exitCode, output }
}

describe('bubblewrap mechanism', () => {
  it('builds the documented argv for each mode', () => {
    const bw = new Bubblewrap('bwrap')
    const filter = unixSocketFilterFile()!
    // /bin/sh opens the seccomp filter as fd 3, then execs bwrap
    const common = ['/bin/sh', '-c', 'exec "$@" 3<"$0"', filter, 'bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc']
    const seccomp = ['--seccomp', '3']
    expect(bw.wrap(['true'], { ...policyFor('read-only', ws, tmp), network: false }, ws))
      .toEqual([...common, '--unshare-all', '--cap-drop', 'ALL', '--die-with-parent', ...seccomp, '--chdir', ws, '--', 'true'])
    expect(bw.wrap(['true'], policyFor('workspace-write', ws, tmp, ['/nonexistent-root']), '/'))
      .toEqual([...common, '--bind', ws, ws, '--bind', tmp, tmp, '--unshare-all', '--share-net', '--cap-drop', 'ALL', '--die-with-parent', ...seccomp, '--chdir', '/', '--', 'true'])
    expect(readFileSync(filter)).toEqual(unixSocketFilter())
  })

  it('is chosen by the probe on this machine', async () => {
    expect(await root.sandbox.probe()).toEqual({ mechanism: 'bubblewrap', detail: 'bubblewrap works' })
  })

  it('auto picks nothing on platforms without a mechanism yet', () => {
    expect(candidates({ mechanism: 'auto', bwrapPath: 'bwrap' }, 'darwin')).toEqual([])
  })
})

describe('ctx.sandbox.wrap', () => {
  it('workspace-write: a write inside the workspace and the temp root lands, one outside fails', async () => {
    const target = path.join(outside, 'escape.txt')
    const result = await sh(`echo in > inside.txt && echo t > ${tmp}/t.txt && echo out > ${target}`)
    expect(result.code).toBe(1)
    expect(result.output).toContain('Read-only file system')
    expect(readFileSync(path.join(ws, 'inside.txt'), 'utf8')).toBe('in\n')
    expect(readFileSync(path.join(tmp, 't.txt'), 'utf8')).toBe('t\n')
    expect(existsSync(target)).toBe(false)
  })

  it('read-only: every write fails except /dev/null', async () => {
    const policy = policyFor('read-only', ws, tmp)
    expect(await sh('echo quiet > /dev/null && echo ok', policy)).toEqual({ code: 0, output: 'ok\n' })
    const result = await sh('echo x > ro.txt', policy)
    expect(result.code).toBe(1)
    expect(result.output).toContain('Read-only file system')
    expect(await sh(`echo x > ${tmp}/ro.txt`, policy)).toMatchObject({ code: 1 })
    expect([existsSync(path.join(ws, 'ro.txt')), existsSync(path.join(tmp, 'ro.txt'))]).toEqual([false, false])
  })

  it.each(['read-only', 'workspace-write'] as const)('%s: a hostile command cannot remount / writable (no capabilities inside)', async (mode) => {
    const target = path.join(outside, `remount-${mode}.txt`)
    const result = await sh(`grep CapEff /proc/self/status; mount -o remount,rw,bind / && echo pwned > ${target} && echo WROTE`, policyFor(mode, ws, tmp))
    expect(result.output).toContain('CapEff:\t0000000000000000')
    expect(result.output).not.toContain('WROTE')
    expect(result.code).not.toBe(0)
    expect(existsSync(target)).toBe(false)
  })

  it('danger-full-access: the argv is unchanged', async () => {
    expect(await root.sandbox.wrap(['x', 'y'], policyFor('danger-full-access', ws, tmp))).toEqual(['x', 'y'])
  })

  it('fails closed with SANDBOX_UNAVAILABLE when no mechanism works', async () => {
    for (const sandbox of [{ mechanism: 'none' }, { mechanism: 'bubblewrap', bwrapPath: '/nonexistent/bwrap' }]) {
      const closed = await execTree({ sandbox })
      expect((await closed.sandbox.probe()).mechanism).toBeNull()
      const error = await closed.sandbox.wrap(['true'], policyFor('workspace-write', ws, tmp)).then(() => null, (e: unknown) => e)
      expect(isDshError(error, 'SANDBOX_UNAVAILABLE')).toBe(true)
      expect((error as { hint?: string }).hint).toContain('bubblewrap')
      expect(await closed.sandbox.wrap(['true'], policyFor('danger-full-access', ws, tmp))).toEqual(['true'])
    }
  })
})
