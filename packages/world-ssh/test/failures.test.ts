import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { isDshError, type ExecPolicy } from '@dsh/protocol'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { WorldSpec } from '../src/url.js'
import { SshWorld } from '../src/world.js'
import { CAN_RUN_SSHD, keygen, processesOf, startSshd, type Sshd, type TestUser } from './sshd.js'
import { workspaceOf } from './trees.js'

async function failure(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p
  } catch (error) {
    if (isDshError(error)) return { code: error.code, message: error.message }
    return { code: 'NOT_DSH', message: String(error) }
  }
  return { code: 'RESOLVED', message: '' }
}

function policy(ws: string): ExecPolicy {
  return { mode: 'workspace-write', cwd: ws, writableRoots: [ws, '/tmp/dsh/failures'], tmpRoot: '/tmp/dsh/failures', network: true }
}

describe.skipIf(!CAN_RUN_SSHD)('ssh world against a real sshd: refusals and failures', () => {
  let sshd: Sshd
  let user: TestUser
  let spec: WorldSpec
  const opened: SshWorld[] = []
  const open = async (s: WorldSpec, key = 'failures') => {
    const world = await SshWorld.open(new Context(), s, key, { keepaliveMs: 1000, readyTimeoutMs: 5000, killGraceMs: 200, bashPath: 'bash', defaultTimeoutMs: 20_000, maxBytes: 30_000, maxLines: 400 })
    opened.push(world)
    return world
  }
  beforeAll(async () => {
    sshd = await startSshd(2)
    user = sshd.users[0]!
    spec = { url: sshd.url(user, user.home), identity: sshd.identity, knownHosts: sshd.knownHosts }
  }, 60_000)
  afterAll(async () => {
    for (const w of opened) await w.close().catch(() => undefined)
    await sshd?.stop()
  }, 60_000)

  test('a changed host key is refused, naming both fingerprints', async () => {
    const other = path.join(sshd.dir, 'other-host')
    keygen(other)
    const pub = readFileSync(`${other}.pub`, 'utf8').trim().split(/\s+/)
    const file = path.join(sshd.dir, 'known_hosts_changed')
    writeFileSync(file, `[127.0.0.1]:${sshd.port} ${pub[0]} ${pub[1]}\n`)
    const pinned = execFileSync('ssh-keygen', ['-l', '-f', `${other}.pub`]).toString().split(/\s+/)[1]!
    const real = execFileSync('ssh-keygen', ['-l', '-f', path.join(sshd.dir, 'host.pub')]).toString().split(/\s+/)[1]!
    const f = await failure(open({ ...spec, knownHosts: file }))
    expect(f.code).toBe('WORLD_HOST_KEY_MISMATCH')
    expect(f.message).toContain(pinned)
    expect(f.message).toContain(real)
  })

  test('a host missing from known_hosts is refused (no trust on first use), and the file is left alone', async () => {
    const file = path.join(sshd.dir, 'known_hosts_other')
    writeFileSync(file, `otherhost ${readFileSync(path.join(sshd.dir, 'host.pub'), 'utf8').trim().split(/\s+/).slice(0, 2).join(' ')}\n`)
    const before = readFileSync(file, 'utf8')
    expect((await failure(open({ ...spec, knownHosts: file }))).code).toBe('WORLD_HOST_UNKNOWN')
    expect(readFileSync(file, 'utf8')).toBe(before)
    expect((await failure(open({ ...spec, knownHosts: path.join(sshd.dir, 'absent') }))).code).toBe('WORLD_KNOWN_HOSTS')
  })

  test('bad input: unreachable host, wrong user, missing / unreadable / passphrase identity, missing root, bad URL', async () => {
    const port = sshd.port === 65535 ? 65534 : sshd.port + 1
    expect((await failure(open({ ...spec, url: `ssh://${user.name}@127.0.0.1:${port}${user.home}` }))).code).toBe('WORLD_UNREACHABLE')
    expect((await failure(open({ ...spec, url: sshd.url({ ...user, name: 'nosuchuserdsh' }, '/tmp') }))).code).toBe('WORLD_AUTH_FAILED')
    expect((await failure(open({ ...spec, identity: path.join(sshd.dir, 'no-such-key') }))).message).toMatch(/does not exist/)
    expect((await failure(open({ ...spec, identity: sshd.dir }))).code).toBe('WORLD_IDENTITY')
    const locked = path.join(sshd.dir, 'locked')
    keygen(locked, 'a passphrase')
    const f = await failure(open({ ...spec, identity: locked }))
    expect(f.code).toBe('WORLD_IDENTITY_PASSPHRASE')
    const missing = await failure(open({ ...spec, url: sshd.url(user, `${user.home}/no/such/root`) }))
    expect(missing.code).toBe('WORLD_ROOT_MISSING')
    expect(missing.message).toContain(`${user.home}/no/such/root`)
    expect((await failure(open({ ...spec, url: 'ssh://127.0.0.1/srv' }))).code).toBe('WORLD_URL')
    expect((await failure(open({ ...spec, url: `ssh://${user.name}@127.0.0.1:${sshd.port}` }))).code).toBe('WORLD_URL')
  })

  test('hostile rc files of the remote user never run (login shell /bin/sh)', async () => {
    const mark = path.join(user.home, 'rc-ran')
    for (const rc of ['.profile', '.bashrc', '.shrc', '.bash_profile', '.bash_login']) {
      writeFileSync(path.join(user.home, rc), `touch ${mark}.${rc.slice(1)}\necho HOSTILE-${rc}\n`)
    }
    execFileSync('chown', [`${user.name}:`, ...['.profile', '.bashrc', '.shrc', '.bash_profile', '.bash_login'].map((rc) => path.join(user.home, rc))])
    const world = await open(spec, 'rc')
    const ws = workspaceOf(user)
    const r = await world.shell.run('echo ok; bash -c "echo nested"', { policy: policy(ws) })
    const out: Buffer[] = []
    await world.subprocess.run(['sh', '-c', 'echo plain'], { cwd: ws, onData: (c) => out.push(c) })
    expect(r.output).toBe('ok\nnested\n')
    expect(Buffer.concat(out).toString()).toBe('plain\n')
    expect(execFileSync('ls', ['-A', user.home]).toString()).not.toContain('rc-ran')
  })

  test('no host variable (secret or not) reaches the remote process environment', async () => {
    process.env.DSH_CANARY_TOKEN = 'canary-secret-1f3a'
    process.env.OPENAI_API_KEY = 'sk-canary-2b4c'
    process.env.PLAIN_HOST_VAR = 'plain-canary-3d5e'
    try {
      const world = await open(spec, 'env')
      const ws = workspaceOf(user)
      const job = await world.shell.start('sleep 41.5', { policy: policy(ws), owner: 'env' })
      let pid: number | undefined
      for (let i = 0; i < 300 && !pid; i++) {
        pid = processesOf(user.uid).find((p) => p.cmd === 'sleep 41.5')?.pid
        if (!pid) await new Promise((r) => setTimeout(r, 10))
      }
      expect(pid).toBeDefined()
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8')
      await world.shell.kill(job.id, 'env')
      expect(environ).not.toMatch(/canary/)
      expect(environ).toContain(`HOME=${user.home}`)
      expect(environ).toContain('TMPDIR=/tmp/dsh-')
    } finally {
      delete process.env.DSH_CANARY_TOKEN
      delete process.env.OPENAI_API_KEY
      delete process.env.PLAIN_HOST_VAR
    }
  })

  test('a connection dropped mid-command is a typed error (no retry); the next operation reconnects and reaps the orphan', async () => {
    const world = await open(spec, 'drop')
    const ws = workspaceOf(user)
    const ran = path.join(ws, 'runs')
    const running = world.subprocess.run(['sh', '-c', `echo x >> ${ran}; sleep 42.5`], { cwd: ws, timeoutMs: 30_000 })
    const settled = running.then(() => 'resolved', (e: unknown) => (isDshError(e) ? e.code : String(e)))
    for (let i = 0; i < 300 && !processesOf(user.uid).some((p) => p.cmd === 'sleep 42.5'); i++) await new Promise((r) => setTimeout(r, 10))
    const children = sshd.sessionPids(user)
    expect(children.length).toBeGreaterThan(0)
    for (const pid of children) process.kill(pid, 'SIGKILL')
    expect(await settled).toBe('WORLD_CONNECTION_LOST')
    expect(readFileSync(ran, 'utf8')).toBe('x\n') // ran once, not retried
    const again: Buffer[] = []
    const r = await world.subprocess.run(['sh', '-c', 'echo back'], { cwd: ws, onData: (c) => again.push(c) })
    expect(r.exitCode).toBe(0)
    expect(Buffer.concat(again).toString()).toBe('back\n')
    for (let i = 0; i < 200 && processesOf(user.uid).some((p) => p.cmd === 'sleep 42.5'); i++) await new Promise((r2) => setTimeout(r2, 20))
    expect(processesOf(user.uid).some((p) => p.cmd === 'sleep 42.5')).toBe(false)
    expect(readFileSync(ran, 'utf8')).toBe('x\n')
  })

  test('an abort that lands while the exec channel is still opening still ends the process', async () => {
    const world = await open(spec, 'abort-race')
    const ws = workspaceOf(user)
    const stop = new AbortController()
    const running = world.subprocess.run(['sleep', '45.5'], { cwd: ws, signal: stop.signal, killGraceMs: 200 })
    stop.abort() // before the channel exists
    expect((await running).aborted).toBe(true)
    for (let i = 0; i < 100 && processesOf(user.uid).some((p) => p.cmd === 'sleep 45.5'); i++) await new Promise((r) => setTimeout(r, 20))
    expect(processesOf(user.uid).some((p) => p.cmd === 'sleep 45.5')).toBe(false)
  })

  test('a file write in flight when the connection drops fails typed and leaves the old content', async () => {
    const world = await open(spec, 'drop-fs')
    const ws = workspaceOf(user)
    const f = path.join(ws, 'f.txt')
    await world.fs.write(f, 'old', policy(ws))
    const big = 'y'.repeat(8 * 1024 * 1024)
    const writing = world.fs.write(f, big, policy(ws)).then(() => 'resolved', (e: unknown) => (isDshError(e) ? e.code : String(e)))
    await new Promise((r) => setTimeout(r, 30))
    for (const pid of sshd.sessionPids(user)) process.kill(pid, 'SIGKILL')
    const outcome = await writing
    // either the write won the race whole, or it failed typed and the old content stands
    if (outcome === 'resolved') expect(readFileSync(f, 'utf8')).toBe(big)
    else {
      expect(outcome).toBe('WORLD_CONNECTION_LOST')
      expect(readFileSync(f, 'utf8')).toBe('old')
    }
    expect(existsSync(f)).toBe(true)
  })

  test('the world\'s directory is mkdir-able only inside its roots, and mkdir is recursive', async () => {
    const world = await open(spec, 'mkdir')
    const ws = workspaceOf(user)
    await world.fs.mkdir(path.join(ws, 'a/b/c'), policy(ws))
    expect(existsSync(path.join(ws, 'a/b/c'))).toBe(true)
    mkdirSync(path.join(ws, 'plain'))
    expect((await failure(world.fs.mkdir('/etc/dsh-no', policy(ws)))).code).toBe('PATH_DENIED')
  })
})
