import { randomBytes } from 'node:crypto'
import { readFileSync, rmSync } from 'node:fs'
import { DshError } from '@dsh/protocol'
import type { Channel } from './channel.js'
import { childrenOf } from './procfs.js'
import { SPAWNER_SCRIPT } from './spawner-script.js'
import { Spawner, type LaunchEvents } from './spawner.js'
import type { SandboxShare } from './types.js'

const READY_TIMEOUT_MS = 10_000
/**
 * A sandbox is started at this many calls of one confinement in a row: its start (two perl
 * starts and bwrap's) costs about what three or four per-call sandboxes do, so a short task
 * (a 3-call one-shot) never pays it, nor its ~8 MB of processes (0092).
 */
export const SHARE_AFTER_CALLS = 4
/** prctl(2)'s number, for the inner spawner's PR_SET_DUMPABLE (elsewhere it stays dumpable). */
const PRCTL: Readonly<Record<string, number>> = { x64: 157, arm64: 167 }

/**
 * Runs outside the sandbox, in front of its mechanism (0092): fd 0 becomes the control socket
 * (dsh's channel, already fd 1 and 2), fd 3 the seccomp program (or /dev/null), fd 4 a
 * listening socket at ARGV[0] for the inner spawner (inside, seccomp refuses unix sockets);
 * then it execs the rest of ARGV. `$^F = 4`: fds up to 4 survive the exec.
 */
const PRELUDE = String.raw`
BEGIN { $^F = 4 }
use strict;
use Socket qw(AF_UNIX SOCK_STREAM pack_sockaddr_un);
my ($path, $fd3, @cmd) = @ARGV;
open(STDIN, '<&', \*STDOUT) or die "control: $!\n";
open(my $three, '<', length $fd3 ? $fd3 : '/dev/null') or die "open $fd3: $!\n";
socket(my $lis, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!\n";
die "fds 3/4 are taken\n" unless fileno($three) == 3 && fileno($lis) == 4;
bind($lis, pack_sockaddr_un($path)) or die "bind $path: $!\n";
listen($lis, 128) or die "listen: $!\n";
{ no warnings; exec { $cmd[0] } @cmd; }
die "exec $cmd[0]: $!\n";
`

/** The key two calls must share to share a sandbox. */
export function shareKey(share: SandboxShare): string {
  return JSON.stringify([share.skeleton, share.fd3 ?? null, share.identity])
}

/** The only child of `pid` (a process of a sandbox's launch chain), read from /proc. */
function onlyChild(pid: number): number | undefined {
  const children = childrenOf(pid)
  return children?.length === 1 ? children[0] : undefined
}

/** The host pid of the child of `parent` (a host pid) whose pid in its own namespace is `inner` (NSpid). */
export function childByInnerPid(parent: number, inner: number): number | undefined {
  for (const child of childrenOf(parent) ?? []) {
    try {
      const m = /^NSpid:\s*(.*)$/m.exec(readFileSync(`/proc/${child}/status`, 'utf8'))
      if (m && Number(m[1]!.trim().split(/\s+/).at(-1)) === inner) return child
    } catch {
      // gone: not it
    }
  }
  return undefined
}

/**
 * Starts one shared sandbox: the host spawner runs PRELUDE → the mechanism's skeleton →
 * the spawner script in its inner mode. Resolves once the inner spawner said `R` and the
 * host pids of the chain are known; rejects with the mechanism's own words otherwise.
 */
export async function startSharedSandbox(host: Spawner, perlPath: string, share: SandboxShare): Promise<Spawner> {
  const socketPath = host.privatePath(`sandbox-${randomBytes(6).toString('hex')}.sock`)
  if (!socketPath) throw new DshError('SPAWNER_FAILED', 'The host spawner has no private directory.')
  const channel: Channel = await host.channels.take()
  const argv = [perlPath, '-e', PRELUDE, socketPath, share.fd3 ?? '', ...share.skeleton, '--chdir', '/', '--', perlPath, '-e', SPAWNER_SCRIPT, '-', String(PRCTL[process.arch] ?? '')]
  return new Promise<Spawner>((resolve, reject) => {
    let leader: number | undefined
    let box: Spawner | undefined
    let text = ''
    const fail = (why: string) => {
      clearTimeout(timer)
      if (box) return box.die()
      channel.reader.destroy()
      if (leader !== undefined) try { process.kill(-leader, 'SIGKILL') } catch { /* gone */ }
      rmSync(socketPath, { force: true })
      reject(new DshError('SPAWNER_FAILED', `The shared sandbox did not start: ${why}`))
    }
    const timer = setTimeout(() => fail('no answer'), READY_TIMEOUT_MS)
    const events: LaunchEvents = {
      // the host spawner's `S` and the sandbox's `R` come on two sockets, in either order
      started: (pid) => {
        leader = pid
        if (text.includes('\n')) ready()
      },
      failed: (error) => fail(error.message),
      exited: (code, signal) => {
        if (box) box.die()
        else fail(text.trim() || `exit ${code ?? signal}`)
        host.release(leader!)
      },
      lost: (error) => fail(error.message),
    }
    channel.reader.once('close', () => box?.die())
    channel.onChunk = (chunk) => {
      if (box) return box.feed(chunk)
      text += chunk.toString('latin1')
      if (text.includes('\n') && leader !== undefined) ready()
    }
    const ready = () => {
      if (box) return
      if (!text.startsWith('R\n')) return fail(text.trim().slice(0, 400))
      const outer = leader!
      // outer bwrap → its pid 1 → the inner spawner
      const pid1 = onlyChild(outer)
      const inner = pid1 === undefined ? undefined : onlyChild(pid1)
      if (inner === undefined) return fail('its processes cannot be found in /proc')
      clearTimeout(timer)
      const reader = channel.reader
      box = new Spawner({
        write: (frame) => { reader.write(frame) },
        ref: () => reader.ref(),
        unref: () => reader.unref(),
        close: () => {
          reader.destroy()
          rmSync(socketPath, { force: true })
        },
      }, undefined, socketPath, outer, (own) => childByInnerPid(inner, own))
      box.label = 'shared sandbox'
      box.onGone = () => {
        try { process.kill(-outer, 'SIGKILL') } catch { /* gone */ }
        rmSync(socketPath, { force: true })
      }
      reader.unref()
      const rest = text.slice(2)
      if (rest) box.feed(Buffer.from(rest, 'latin1'))
      resolve(box)
    }
    host.launch(argv, '/', { PATH: process.env.PATH ?? '/usr/bin:/bin' }, channel, events, false)
  })
}

/**
 * The shared sandboxes of one `LocalSubprocess` (0092): at most one current sandbox, for the
 * last key asked for. `get` answers it once it is up; the call that asks for a key the
 * `SHARE_AFTER_CALLS`th time in a row starts one, and it and the calls before run per call
 * (no command waits for a start), and
 * the old sandbox is retired (closed once its calls have settled and their groups were
 * released). A sandbox that does not start turns sharing off for the rest of the process:
 * `get` answers undefined and the caller runs the per-call argv, confined as before.
 */
export class SharedSandboxes {
  private current: { key: string; box: Promise<Spawner | undefined>; ready?: Spawner } | undefined
  private readonly boxes = new Set<Spawner>()
  private off = false
  private asked = { key: '', calls: 0 }

  constructor(private readonly perlPath: string, private readonly after = SHARE_AFTER_CALLS) {}

  get(share: SandboxShare, host: Spawner): Spawner | undefined {
    if (this.off) return undefined
    const key = shareKey(share)
    if (this.current?.key === key) return this.current.ready?.alive ? this.current.ready : undefined
    this.asked = this.asked.key === key ? { key, calls: this.asked.calls + 1 } : { key, calls: 1 }
    if (this.asked.calls < this.after) return undefined
    const old = this.current
    const entry: { key: string; box: Promise<Spawner | undefined>; ready?: Spawner } = { key, box: Promise.resolve(undefined) }
    entry.box = startSharedSandbox(host, this.perlPath, share).then((b) => {
      this.boxes.add(b)
      b.onIdle = () => { if (this.current !== entry) b.close() }
      const gone = b.onGone
      b.onGone = () => {
        gone()
        this.boxes.delete(b)
        if (this.current === entry) this.current = undefined
      }
      // a key asked for since (or close) retired it while it started
      if (this.current !== entry) b.close()
      else entry.ready = b
      return b
    }, () => {
      this.off = true
      if (this.current === entry) this.current = undefined
      return undefined
    })
    this.current = entry
    void old?.box.then((b) => { if (b && !b.busy) b.close() })
    return undefined
  }

  /** Resolves once the sandbox being started (if any) is up or has failed (tests, benchmarks). */
  async settled(): Promise<void> {
    await this.current?.box
  }

  /** The running sandboxes (diagnostics and tests). */
  get running(): Spawner[] {
    return [...this.boxes].filter((b) => b.alive)
  }

  /** Ends every sandbox now (synchronous: also used at process exit). */
  close(): void {
    this.off = true
    this.current = undefined
    for (const box of this.boxes) {
      box.close()
      box.die()
    }
    this.boxes.clear()
  }
}
