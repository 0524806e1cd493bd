import { existsSync } from 'node:fs'
import type { ExecPolicy } from '@dsh/protocol'
import { writableRootsOf } from '../fs/paths.js'
import type { SandboxShare, SubprocessSeam } from '../subprocess/types.js'
import { unixSocketFilterFile } from './seccomp.js'
import type { Confinement, SandboxMechanism } from './types.js'

/**
 * bubblewrap (Linux). The whole filesystem is bound read-only, with a fresh /dev (whose
 * null, zero, tty… are writable; its /dev/shm is a private tmpfs) and /proc; under
 * workspace-write each existing writable root is bound read-write on top. All namespaces
 * are unshared except the network when the policy allows it. `--die-with-parent` ties the
 * sandbox to its monitor; there is no `--new-session`, so the sandboxed processes stay in
 * the caller's process group and a group kill reaches them (the caller already runs
 * them detached, without a controlling terminal, so TIOCSTI has nothing to target).
 *
 * A hard link inside a writable root to a file outside it is the same inode, so a command
 * writing through it would change the outside file: the service finds such links and
 * passes them as `confine.readOnly`, bound read-only on top (a sandboxed command cannot
 * make new ones: link(2) across mounts is EXDEV). Symlinks out of the roots do not help:
 * their targets are read-only mounts.
 *
 * A secret directory (`confine.hiddenDirs`) gets an empty read-only tmpfs over it: one
 * mountinfo parse (the remount) instead of one bind per file (0083), no host path a command
 * could swap, and files created in it after the sandbox was built are hidden too.
 *
 * A seccomp filter (`seccomp.ts`) refuses `socket(AF_UNIX)`: path sockets outside the
 * workspace are reachable through a read-only bind. bwrap reads it from fd 3, which a
 * `/bin/sh` in front opens before it execs bwrap (`exec "$@" 3<FILE`).
 */
export class Bubblewrap implements SandboxMechanism {
  readonly name = 'bubblewrap'

  constructor(private readonly bwrapPath = 'bwrap') {}

  private base(policy: ExecPolicy): string[] {
    const args = [this.bwrapPath, '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc']
    if (policy.mode === 'workspace-write') {
      for (const root of writableRootsOf(policy)) if (existsSync(root)) args.push('--bind', root, root)
    }
    args.push('--unshare-all')
    if (policy.network) args.push('--share-net')
    // no capabilities inside: as root, CAP_SYS_ADMIN would let a command remount / read-write
    args.push('--cap-drop', 'ALL', '--die-with-parent')
    return args
  }

  /** Everything of the per-call argv but the working directory and the command (`wrap` and `share` both build on it). */
  private skeleton(policy: ExecPolicy, confine: Confinement): { skeleton: string[]; fd3?: string } {
    // after the writable binds, so files inside a writable root are covered too
    const readOnly = [
      ...(confine.readOnly ?? []).flatMap((file) => ['--ro-bind', file, file]),
      ...(confine.writable ?? []).flatMap((file) => ['--bind', file, file]),
    ]
    const masks = [
      ...(confine.hiddenDirs ?? []).flatMap((dir) => ['--tmpfs', dir, '--remount-ro', dir]),
      ...(confine.masked ?? []).flatMap((file) => ['--ro-bind', '/dev/null', file]),
    ]
    const filter = unixSocketFilterFile()
    const seccomp = filter ? ['--seccomp', '3'] : []
    return { skeleton: [...this.base(policy), ...seccomp, ...readOnly, ...masks], ...(filter ? { fd3: filter } : {}) }
  }

  wrap(argv: string[], policy: ExecPolicy, cwd: string, confine: Confinement = {}): string[] {
    const { skeleton, fd3 } = this.skeleton(policy, confine)
    const inner = [...skeleton, '--chdir', cwd, '--', ...argv]
    return fd3 ? ['/bin/sh', '-c', 'exec "$@" 3<"$0"', fd3, ...inner] : inner
  }

  share(argv: string[], policy: ExecPolicy, confine: Confinement, identity: string): SandboxShare {
    return { ...this.skeleton(policy, confine), identity, command: argv }
  }

  async probe(subprocess: SubprocessSeam): Promise<{ ok: true } | { ok: false; reason: string }> {
    let output = ''
    const argv = this.wrap(['true'], { mode: 'read-only', cwd: '/', writableRoots: [], tmpRoot: '', network: true }, '/')
    try {
      const result = await subprocess.run(argv, { cwd: '/', timeoutMs: 10_000, onData: (chunk) => { output += chunk.toString() } })
      if (result.exitCode === 0) return { ok: true }
      const why = output.trim() || (result.signal ? `killed by ${result.signal}` : `exit code ${result.exitCode}`)
      return { ok: false, reason: `${this.bwrapPath} does not work here: ${why}` }
    } catch (error) {
      return { ok: false, reason: `${this.bwrapPath} cannot be started: ${(error as Error).message}` }
    }
  }
}
