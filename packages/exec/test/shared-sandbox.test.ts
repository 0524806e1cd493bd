import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import { isDshError, type ExecPolicy } from '@dsh/protocol'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { LocalSubprocess } from '../src/subprocess/local.js'
import { SHARE_AFTER_CALLS } from '../src/subprocess/shared-sandbox.js'
import { cleanupDirs, execTree, policyFor, processesInGroup, tempDir, until } from './helpers.js'

// One long-lived sandbox per confinement (0092): what a command sees and what survives it must
// be what a per-call bubblewrap gives. Each case below fails with `shareSandbox: false` or
// without the part of the shared sandbox it names.

let root: Context
let ws: string
let tmp: string
let outside: string
let home: string
const savedHome = process.env.DSH_HOME

beforeAll(async () => {
  home = tempDir('home')
  process.env.DSH_HOME = home
  // a sandbox from a confinement's first call, so each case reaches it at once
  root = await execTree({ subprocess: { shareAfterCalls: 1 } })
  ws = tempDir('ws')
  tmp = tempDir('tmproot')
  outside = tempDir('outside')
})
afterAll(() => {
  if (savedHome === undefined) delete process.env.DSH_HOME
  else process.env.DSH_HOME = savedHome
  cleanupDirs()
})

function sub(): LocalSubprocess {
  return root.subprocess as unknown as LocalSubprocess
}

const policy = (extra: Partial<ExecPolicy> = {}): ExecPolicy => ({ ...policyFor('workspace-write', ws, tmp), network: false, ...extra })

async function sh(command: string, options: { policy?: ExecPolicy; timeoutMs?: number; signal?: AbortSignal } = {}) {
  return root.shell.run(command, { policy: options.policy ?? policy(), ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}), ...(options.signal ? { signal: options.signal } : {}) })
}

/** Commands of `p` until its sandbox starts, then the wait for it (until then calls run per call). */
async function warm(p = policy()): Promise<void> {
  for (let i = 0; i < SHARE_AFTER_CALLS; i++) await sh('true', { policy: p })
  await sub().sandboxesSettled()
}

/** The pid namespace of a command in the (warm) sandbox of `p` (its /proc/self/ns/pid link). */
async function pidNs(p = policy()): Promise<string> {
  await warm(p)
  return (await sh('readlink /proc/self/ns/pid', { policy: p })).output.trim()
}

/** Host pids of the processes in pid namespace `ns` (read from the host's /proc). */
function inNamespace(ns: string): number[] {
  const out: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readlinkSync(`/proc/${entry}/ns/pid`) !== ns) continue
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z') out.push(Number(entry))
    } catch {
      // gone
    }
  }
  return out
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

afterEach(async () => {
  rmSync(path.join(home, '.credentials.yaml'), { force: true })
})

describe('a shared sandbox (0092)', () => {
  it('runs the commands of one confinement in one sandbox, not one per call (the first runs per call while it starts)', async () => {
    const first = await pidNs()
    expect(first).toMatch(/^pid:\[\d+\]$/)
    expect(await pidNs()).toBe(first)
    expect(first).not.toBe(readlinkSync('/proc/self/ns/pid'))
    expect(sub().sandboxPids).toHaveLength(1)
    // the same confinement as a per-call sandbox: a write outside fails, inside lands
    const r = await sh(`echo in > inside.txt; echo t > ${tmp}/t.txt; echo out > ${outside}/x.txt`)
    expect(r.exitCode).toBe(1)
    expect(r.sandboxDenied).toBe(true)
    expect(readFileSync(path.join(ws, 'inside.txt'), 'utf8')).toBe('in\n')
    expect(readFileSync(path.join(tmp, 't.txt'), 'utf8')).toBe('t\n')
    expect(existsSync(path.join(outside, 'x.txt'))).toBe(false)
  })

  it('a secret that appears later, or is rewritten by rename, gets a new sandbox that masks it', async () => {
    const before = await pidNs()
    const creds = path.join(home, '.credentials.yaml')
    writeFileSync(creds, 'key: CANARY-1\n')
    const r1 = await sh(`cat ${creds}; readlink /proc/self/ns/pid`)
    expect(r1.output).not.toContain('CANARY')
    const second = r1.output.trim().split('\n').at(-1)
    expect(second).not.toBe(before)
    await sub().sandboxesSettled()
    // an atomic rewrite: same path, new inode (a bind over the old one would be detached)
    writeFileSync(`${creds}.tmp`, 'key: CANARY-2\n')
    renameSync(`${creds}.tmp`, creds)
    const r2 = await sh(`cat ${creds}; readlink /proc/self/ns/pid`)
    expect(r2.output).not.toContain('CANARY')
    expect(r2.output.trim().split('\n').at(-1)).not.toBe(second)
  })

  it('another confinement (the network allowed) is another sandbox; the old one is retired once idle', async () => {
    const plain = await pidNs()
    const [oldBox] = sub().sandboxPids
    const net = await pidNs(policy({ network: true }))
    expect(net).not.toBe(plain)
    await until(() => !alive(oldBox!) && sub().sandboxPids.length === 1)
    expect(inNamespace(plain)).toEqual([])
    expect(sub().sandboxPids).toHaveLength(1)
  })

  it('output order, exit codes and signal names are the command\'s own', async () => {
    const r = await sh('echo a; echo b >&2; echo c; exit 3')
    expect(r.output).toBe('a\nb\nc\n')
    expect(r.exitCode).toBe(3)
    const killed = await sh('kill -TERM $$')
    expect(killed.signal).toBe('SIGTERM')
    expect(killed.exitCode).toBeNull()
  })

  it('a timeout and an abort kill the command\'s group inside (the host pid is reported), leaving nothing', async () => {
    const ns = await pidNs()
    const base = inNamespace(ns).length
    const timed = await sh('trap "" TERM; (trap "" TERM; sleep 30) & sleep 30', { timeoutMs: 300 })
    expect(timed.timedOutMs).toBe(300)
    expect(inNamespace(ns)).toHaveLength(base)
    const job = await root.shell.start('sleep 31 & sleep 31', { policy: policy() })
    expect(readlinkSync(`/proc/${job.pid!}/ns/pid`)).toBe(ns)
    await until(() => processesInGroup(job.pid!).length === 3)
    const out = await root.shell.kill(job.id)
    expect(out.running).toBe(false)
    expect(processesInGroup(job.pid!)).toEqual([])
    expect(inNamespace(ns)).toHaveLength(base)
  })

  it('what a finished command leaves is gone before the next: its group, a setsid daemon, /dev and /dev/shm files, System V IPC', async () => {
    const ns = await pidNs()
    const base = inNamespace(ns).length
    expect(base).toBe(2) // bubblewrap's pid 1 and the spawner
    const r = await sh('sleep 32 & setsid sleep 33 & echo x > /dev/shm/left; mkdir -p /dev/shm/d/e; touch /dev/shm/d/e/f; echo y > /dev/left; rm /dev/stdout; ipcmk -M 4096 >/dev/null; echo ran')
    expect(r.output).toBe('ran\n')
    const next = await sh('ls -A /dev/shm; ls /dev | grep left; readlink /dev/stdout; ipcs -m | grep -c 0x')
    expect(next.output).toBe('/proc/self/fd/1\n0\n')
    expect(inNamespace(ns)).toHaveLength(base)
  })

  it('daemons that fork without pause are all gone before the next command (one kill pass read from /proc missed their new children)', async () => {
    const ns = await pidNs()
    for (let round = 0; round < 3; round++) {
      const r = await sh('for j in 1 2 3 4 5 6; do (setsid bash -c "while :; do (sleep 36 &); done" >/dev/null 2>&1 &); done; sleep 0.3; echo ran')
      expect(r.output).toBe('ran\n')
      const next = await sh('ps -eo args= | grep -c "[s]leep 36"')
      expect(next.output).toBe('0\n')
    }
    expect(inNamespace(ns)).toHaveLength(2)
  })

  it('a setsid daemon still holding the output does not hold the call, finished or cancelled (a per-call sandbox ended it with its leader); the sweep ends it', async () => {
    const r = await sh('echo before; (setsid sleep 37 &); echo after')
    expect(r.output).toBe('before\nafter\n')
    expect(r.exitCode).toBe(0)
    expect((await sh('ps -eo args= | grep -c "[s]leep 37"')).output).toBe('0\n')
    const abort = new AbortController()
    rmSync(path.join(ws, 'started-38'), { force: true })
    const pending = sh('(setsid sleep 38 &); echo started; touch started-38; sleep 39', { signal: abort.signal })
    await until(() => existsSync(path.join(ws, 'started-38')))
    abort.abort()
    const cancelled = await pending
    expect(cancelled.aborted).toBe(true)
    expect(cancelled.output).toBe('started\n')
    expect((await sh('ps -eo args= | grep -c "[s]leep 3[89]"')).output).toBe('0\n')
  })

  it('background jobs and foreground commands run at once in one sandbox', async () => {
    const ns = await pidNs()
    const jobs = await Promise.all([1, 2, 3].map((i) => root.shell.start(`sleep 0.3; echo job${i}`, { policy: policy() })))
    const fg = await Promise.all([1, 2].map((i) => sh(`echo fg${i}; readlink /proc/self/ns/pid`)))
    expect(fg.map((r) => r.output)).toEqual([`fg1\n${ns}\n`, `fg2\n${ns}\n`])
    for (const job of jobs) {
      expect(readlinkSync(`/proc/${job.pid!}/ns/pid`)).toBe(ns)
    }
    await until(() => jobs.every((j) => !root.shell.output(j.id).running))
    // output() hands out what is new since the last call; the job's whole output was new
    expect(jobs.map((j) => root.shell.output(j.id).exitCode)).toEqual([0, 0, 0])
  })

  it('SPAWN_FAILED names the errno inside the sandbox as outside', async () => {
    await warm()
    const confined = await root.sandbox.confine!(['/nonexistent/program'], policy(), ws)
    expect(confined.share).toBeDefined()
    const error = await root.subprocess.run(confined.argv, { cwd: ws, share: confined.share! }).then(() => null, (e: unknown) => e)
    expect(isDshError(error, 'SPAWN_FAILED')).toBe(true)
    expect((error as { data?: { errno?: string } }).data?.errno).toBe('ENOENT')
    const noDir = await root.sandbox.confine!(['true'], policy(), ws)
    const cwdError = await root.subprocess.run(noDir.argv, { cwd: path.join(ws, 'missing'), share: noDir.share! }).then(() => null, (e: unknown) => e)
    expect((cwdError as { data?: { errno?: string } }).data?.errno).toBe('ENOENT')
  })

  it('the sandbox killed mid-command: SUBPROCESS_LOST, and the next command runs in a new sandbox, still confined', async () => {
    const ns = await pidNs()
    const [box] = sub().sandboxPids
    const pending = sh('sleep 34')
    const outcome = pending.then(() => null, (e: unknown) => e)
    await until(() => inNamespace(ns).length === 3)
    process.kill(box!, 'SIGKILL')
    const error = await outcome
    expect(isDshError(error, 'SUBPROCESS_LOST')).toBe(true)
    expect((error as Error).message).toMatch(/shared sandbox exited while bash ran/)
    await until(() => inNamespace(ns).length === 0)
    const r = await sh(`echo out > ${outside}/y.txt; readlink /proc/self/ns/pid`)
    expect(r.sandboxDenied).toBe(true)
    expect(existsSync(path.join(outside, 'y.txt'))).toBe(false)
    expect(r.output.trim().split('\n').at(-1)).not.toBe(ns)
  })

  it('a command cannot ptrace or stop the spawner that forks later commands: not dumpable, and a stopped one is given up (lost, not hung)', async () => {
    await warm()
    const maps = await sh('cat /proc/2/maps > /dev/null && echo readable || echo refused')
    expect(maps.output).toContain('refused')
    const ns = await pidNs()
    const stopped = await sh('kill -STOP 2; sleep 35', { timeoutMs: 300 }).then(() => null, (e: unknown) => e)
    // lost once it had started; SPAWN_FAILED when the stop came before the spawner reported the start
    expect(isDshError(stopped, 'SUBPROCESS_LOST') || isDshError(stopped, 'SPAWN_FAILED')).toBe(true)
    expect((stopped as Error).message).toMatch(/shared sandbox exited/)
    await until(() => inNamespace(ns).length === 0)
    expect((await sh('echo again')).output).toBe('again\n')
  })

  it('a sandbox that cannot start is never a run outside it: the per-call argv runs, and sharing stops', async () => {
    const other = await execTree({ subprocess: { shareAfterCalls: 1 } })
    const confined = await other.sandbox.confine!(['bash', '-c', `readlink /proc/self/ns/pid; echo out > ${outside}/z.txt`], policy(), ws)
    let output = ''
    const broken = { ...confined.share!, skeleton: ['bwrap', '--no-such-option'] }
    const result = await other.subprocess.run(confined.argv, { cwd: ws, share: broken, onData: (c) => { output += c.toString() } })
    expect(result.exitCode).toBe(1)
    expect(output).toContain('Read-only file system')
    expect(output.split('\n')[0]).not.toBe(readlinkSync('/proc/self/ns/pid'))
    expect(existsSync(path.join(outside, 'z.txt'))).toBe(false)
    expect((other.subprocess as unknown as LocalSubprocess).sandboxPids).toEqual([])
  })

  it('dsh killed -9: the sandbox and its commands go; nothing of it is left in /proc or /tmp', async () => {
    const script = `
      import { Context } from '@deepseek-ai/cordis'
      import * as sp from './packages/exec/dist/plugins/subprocess.js'
      import * as sb from './packages/exec/dist/plugins/sandbox.js'
      import * as fs from './packages/exec/dist/plugins/fs.js'
      import * as shell from './packages/exec/dist/plugins/shell.js'
      const ctx = new Context()
      await ctx.plugin(sp, sp.Config.parse({}))
      await ctx.plugin(sb, sb.Config.parse({}))
      await ctx.plugin(fs, {})
      await ctx.plugin(shell, shell.Config.parse({}))
      const policy = ${JSON.stringify(policy())}
      for (let i = 0; i < 4; i++) await ctx.shell.run('true', { policy })
      await ctx.subprocess.sandboxesSettled()
      const job = await ctx.shell.start('trap "" TERM; sleep 300', { policy })
      console.log(JSON.stringify({ job: job.pid, spawner: ctx.subprocess.spawnerPid, boxes: ctx.subprocess.sandboxPids }))`
    const repo = path.resolve(import.meta.dirname, '..', '..', '..')
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, DSH_HOME: home } })
    const line = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString())))
    const { job, spawner, boxes } = JSON.parse(line) as { job: number; spawner: number; boxes: number[] }
    expect(boxes).toHaveLength(1)
    const ns = readlinkSync(`/proc/${job}/ns/pid`)
    expect(inNamespace(ns).length).toBe(3)
    const socketDir = path.dirname(readFileSync(`/proc/${spawner}/cmdline`, 'utf8').split('\0').filter(Boolean).at(-1)!)
    expect(readdirSync(socketDir).filter((f) => f.startsWith('sandbox-'))).toHaveLength(1)
    child.kill('SIGKILL')
    await until(() => !alive(spawner) && !alive(boxes[0]!) && inNamespace(ns).length === 0)
    expect(existsSync(socketDir)).toBe(false)
  })
})

describe('when a sandbox is shared', () => {
  async function namespaces(config: Record<string, unknown>, calls: number): Promise<{ seen: string[]; boxes: number[] }> {
    const other = await execTree({ subprocess: config })
    const seen: string[] = []
    for (let i = 0; i < calls; i++) {
      seen.push((await other.shell.run('readlink /proc/self/ns/pid', { policy: policy() })).output)
      await (other.subprocess as unknown as LocalSubprocess).sandboxesSettled()
    }
    return { seen, boxes: (other.subprocess as unknown as LocalSubprocess).sandboxPids }
  }

  it(`by default from the ${SHARE_AFTER_CALLS}th call of a confinement on: a short task runs a bubblewrap per call and starts none`, async () => {
    const short = await namespaces({}, SHARE_AFTER_CALLS - 1)
    expect(new Set(short.seen).size).toBe(SHARE_AFTER_CALLS - 1)
    expect(short.boxes).toEqual([])
    const long = await namespaces({}, SHARE_AFTER_CALLS + 2)
    expect(new Set(long.seen).size).toBe(SHARE_AFTER_CALLS + 1)
    expect(long.boxes).toHaveLength(1)
  })

  it('never with shareSandbox: false (the control for the cases above)', async () => {
    const off = await namespaces({ shareSandbox: false }, SHARE_AFTER_CALLS + 2)
    expect(new Set(off.seen).size).toBe(SHARE_AFTER_CALLS + 2)
    expect(off.boxes).toEqual([])
    mkdirSync(path.join(ws, 'unused'), { recursive: true })
  })
})
