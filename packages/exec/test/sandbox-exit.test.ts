// A command killed by a signal inside bubblewrap is reported as that signal (bwrap itself
// exits 128+N), the same as outside the sandbox; plain exit codes are untouched.
import { Context } from '@deepseek-ai/cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sandboxedExit } from '../src/sandbox/exit.js'
import { cleanupDirs, execTree, policyFor, tempDir } from './helpers.js'

let root: Context
let ws: string
let tmp: string

beforeAll(async () => {
  root = await execTree()
  ws = tempDir('ws')
  tmp = tempDir('tmproot')
})
afterAll(cleanupDirs)

describe('exit status of sandboxed commands', () => {
  it.each(['workspace-write', 'read-only', 'danger-full-access'] as const)('%s: kill -TERM $$ is SIGTERM, kill -KILL $$ is SIGKILL, exit 3 is 3', async (mode) => {
    const policy = policyFor(mode, ws, tmp)
    const run = async (command: string) => {
      const r = await root.shell.run(command, { policy })
      return { exitCode: r.exitCode, signal: r.signal }
    }
    expect(await run('kill -TERM $$')).toEqual({ exitCode: null, signal: 'SIGTERM' })
    expect(await run('kill -KILL $$')).toEqual({ exitCode: null, signal: 'SIGKILL' })
    expect(await run('exit 3')).toEqual({ exitCode: 3, signal: null })
  })

  it('a background job killed by a signal inside the sandbox reports the signal', async () => {
    const job = await root.shell.start('sleep 0.1; kill -INT $$', { policy: policyFor('workspace-write', ws, tmp) })
    let out = root.shell.output(job.id)
    for (let i = 0; i < 200 && out.running; i++) {
      await new Promise((r) => setTimeout(r, 25))
      out = root.shell.output(job.id)
    }
    expect({ exitCode: out.exitCode, signal: out.signal }).toEqual({ exitCode: null, signal: 'SIGINT' })
  })

  it('maps 128+N to the signal and leaves everything else', () => {
    expect(sandboxedExit({ exitCode: 137, signal: null })).toEqual({ exitCode: null, signal: 'SIGKILL' })
    expect(sandboxedExit({ exitCode: 143, signal: null })).toEqual({ exitCode: null, signal: 'SIGTERM' })
    expect(sandboxedExit({ exitCode: 128, signal: null })).toEqual({ exitCode: 128, signal: null })
    expect(sandboxedExit({ exitCode: 255, signal: null })).toEqual({ exitCode: 255, signal: null })
    expect(sandboxedExit({ exitCode: null, signal: 'SIGTERM' })).toEqual({ exitCode: null, signal: 'SIGTERM' })
    expect(sandboxedExit({ exitCode: 0, signal: null })).toEqual({ exitCode: 0, signal: null })
  })
})
