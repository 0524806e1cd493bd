import { Context } from '@deepseek-ai/cordis'
import { execFileSync } from 'node:child_process'
import { expect, test } from 'vitest'
import { SshWorld } from '../src/world.js'
import { startSshd } from './sshd.js'

test('smoke', async () => {
  const sshd = await startSshd(1)
  try {
    const u = sshd.users[0]!
    execFileSync('mkdir', ['-p', `${u.home}/ws`]); execFileSync('chown', [`${u.name}:`, `${u.home}/ws`])
    const ctx = new Context()
    const w = await SshWorld.open(ctx, { url: sshd.url(u, `${u.home}/ws`), identity: sshd.identity, knownHosts: sshd.knownHosts }, 'sess1')
    const out: Buffer[] = []
    const r = await w.subprocess.run(['sh', '-c', 'id -un; pwd; env; echo err >&2; exit 3'], { cwd: `${u.home}/ws`, onData: (c) => out.push(c) })
    console.log(r, Buffer.concat(out).toString())
    const policy = { mode: 'workspace-write' as const, cwd: `${u.home}/ws`, writableRoots: [`${u.home}/ws`], tmpRoot: '/tmp/dsh/sess1', network: true }
    const st = await w.fs.write(`${u.home}/ws/a/b.txt`, 'hello', policy)
    console.log(st, await w.fs.readdir(`${u.home}/ws/a`), Buffer.from(await w.fs.readFile(`${u.home}/ws/a/b.txt`)).toString())
    await expect(w.fs.write('/etc/x', 'no', policy)).rejects.toThrow(/PATH_DENIED|outside/)
    const sr = await w.shell.run('echo $TMPDIR; whoami; sleep 5', { policy, timeoutMs: 500 })
    console.log(sr)
    await w.close()
  } finally { await sshd.stop() }
})
