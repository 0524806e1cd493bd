import { execFile, spawnSync } from 'node:child_process'
import { promisify } from 'node:util'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Bubblewrap } from '../src/sandbox/bubblewrap.js'
import { unixSocketFilter } from '../src/sandbox/seccomp.js'

describe('the unix-socket seccomp filter', () => {
  it('is a 9-instruction cBPF program for x64 and arm64, and absent elsewhere', () => {
    expect(unixSocketFilter('x64')?.length).toBe(72)
    expect(unixSocketFilter('arm64')?.length).toBe(72)
    expect(unixSocketFilter('ia32')).toBeUndefined()
    // the last two instructions: deny with EACCES, allow
    const x64 = unixSocketFilter('x64')!
    expect(x64.readUInt32LE(7 * 8 + 4)).toBe(0x0005000d)
    expect(x64.readUInt32LE(8 * 8 + 4)).toBe(0x7fff0000)
  })

  const dir = mkdtempSync(join(tmpdir(), 'dsh-seccomp-test-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it.runIf(existsSync('/usr/bin/bwrap') && process.arch === 'x64')('inside bubblewrap, a path socket outside the workspace cannot be reached; socketpair still works', async () => {
    const path = join(dir, 'outside.sock')
    const server = createServer((c) => c.end('reached')).listen(path)
    await new Promise((r) => server.once('listening', r))
    try {
      const policy = { mode: 'workspace-write' as const, cwd: dir, writableRoots: [dir], tmpRoot: join(dir, 'tmp'), network: false }
      const probe = `require('net').connect(${JSON.stringify(path)}).on('data', (d) => console.log('data', String(d))).on('error', (e) => console.log('error', e.code))`
      // control: outside the sandbox the socket answers
      // (async: the server lives in this process and must keep accepting)
      const run = promisify(execFile)
      expect((await run(process.execPath, ['-e', probe])).stdout.trim()).toBe('data reached')
      const argv = new Bubblewrap().wrap([process.execPath, '-e', probe], policy, dir)
      expect((await run(argv[0]!, argv.slice(1))).stdout.trim()).toBe('error EACCES')
      const pair = new Bubblewrap().wrap(['python3', '-c', 'import socket; socket.socketpair(); print("pair")'], policy, dir)
      expect(spawnSync(pair[0]!, pair.slice(1), { encoding: 'utf8' }).stdout.trim()).toBe('pair')
    } finally {
      server.close()
    }
  })
})
