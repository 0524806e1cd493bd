import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createConnection, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'

/** Whether this machine can run the real-sshd tests (root, for useradd; sshd installed). */
export const CAN_RUN_SSHD = process.getuid?.() === 0 && existsSync('/usr/sbin/sshd') && existsSync('/usr/bin/ssh-keygen')

export interface TestUser { name: string; home: string; uid: number }

export interface Sshd {
  dir: string
  port: number
  users: TestUser[]
  /** Private key authorised for every test user (unencrypted). */
  identity: string
  /** known_hosts pinning this sshd's host key. */
  knownHosts: string
  url(user: TestUser, root: string): string
  /** The sshd children serving a user's sessions (their pids). */
  sessionPids(user: TestUser): number[]
  stop(): Promise<void>
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port
      server.close(() => resolve(port))
    })
  })
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`sshd exited: ${log()}`)
    const ok = await new Promise<boolean>((resolve) => {
      const s = createConnection({ host: '127.0.0.1', port }, () => { s.end(); resolve(true) })
      s.once('error', () => resolve(false))
    })
    if (ok) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`sshd did not listen on ${port}: ${log()}`)
}

export function keygen(file: string, passphrase = ''): void {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', 'dsh-test', '-f', file])
}

/** Creates `count` users (login shell `shell`, password field `*`) and an sshd on a free loopback port. */
export async function startSshd(count = 1, shell = '/bin/sh'): Promise<Sshd> {
  const dir = mkdtempSync(path.join(tmpdir(), 'dsh-sshd-'))
  chmodSync(dir, 0o755)
  keygen(path.join(dir, 'host'))
  keygen(path.join(dir, 'id'))
  const pub = readFileSync(path.join(dir, 'id.pub'), 'utf8')
  const tag = randomBytes(3).toString('hex')
  const users: TestUser[] = []
  for (let i = 0; i < count; i++) {
    const name = `dshw${tag}${i}`
    execFileSync('useradd', ['-m', '-s', shell, '-p', '*', name])
    const home = `/home/${name}`
    mkdirSync(path.join(home, '.ssh'), { mode: 0o700 })
    writeFileSync(path.join(home, '.ssh', 'authorized_keys'), pub, { mode: 0o600 })
    execFileSync('chown', ['-R', `${name}:`, path.join(home, '.ssh')])
    users.push({ name, home, uid: Number(execFileSync('id', ['-u', name]).toString().trim()) })
  }
  const port = await freePort()
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 })
  const cfg = path.join(dir, 'sshd_config')
  writeFileSync(cfg, [
    'ListenAddress 127.0.0.1', `Port ${port}`, `HostKey ${dir}/host`, `PidFile ${dir}/sshd.pid`,
    'PubkeyAuthentication yes', 'PasswordAuthentication no', 'KbdInteractiveAuthentication no', 'UsePAM no',
    'Subsystem sftp internal-sftp', 'MaxSessions 64', 'MaxStartups 100:30:200', 'LogLevel ERROR', '',
  ].join('\n'))
  const knownHosts = path.join(dir, 'known_hosts')
  const hostPub = readFileSync(path.join(dir, 'host.pub'), 'utf8').trim().split(/\s+/)
  writeFileSync(knownHosts, `[127.0.0.1]:${port} ${hostPub[0]} ${hostPub[1]}\n`)
  let log = ''
  const child = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', cfg], { stdio: ['ignore', 'ignore', 'pipe'] })
  child.stderr!.on('data', (c: Buffer) => { log += c.toString() })
  await waitForPort(port, child, () => log)
  return {
    dir, port, users, identity: path.join(dir, 'id'), knownHosts,
    url: (user, root) => `ssh://${user.name}@127.0.0.1:${port}${root}`,
    sessionPids: (user) => {
      const out = execFileSync('ps', ['-o', 'pid=,args=', '-u', user.name]).toString()
      return out.split('\n').filter((l) => /sshd: /.test(l)).map((l) => Number(l.trim().split(/\s+/)[0]))
    },
    stop: async () => {
      child.kill('SIGTERM')
      await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)))
      for (const u of users) {
        for (const p of processesOf(u.uid)) { try { process.kill(p.pid, 'SIGKILL') } catch { /* gone */ } }
        try { execFileSync('userdel', ['-r', '-f', u.name], { stdio: 'ignore' }) } catch { /* already gone */ }
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Live pids owned by `uid` (from /proc). */
export function processesOf(uid: number): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const status = readFileSync(`/proc/${name}/status`, 'utf8')
      const m = /^Uid:\s+(\d+)/m.exec(status)
      if (!m || Number(m[1]) !== uid) continue
      out.push({ pid: Number(name), cmd: readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ').trim() })
    } catch { /* gone */ }
  }
  return out
}
