import { homedir } from 'node:os'
import path from 'node:path'
import type { Context, Fiber } from '@deepseek-ai/cordis'
import { DshError, type ExecPolicy } from '@dsh/protocol'
import { LocalShell, type SandboxSeam, type ShellSeam, type World } from '@dsh/exec'
import { SshConnection } from './connection.js'
import { SshFs } from './fs.js'
import { shq } from './quote.js'
import { SshSubprocess } from './subprocess.js'
import { formatTarget, parseWorldUrl, type WorldSpec, type WorldTarget } from './url.js'

export interface WorldOptions {
  keepaliveMs: number
  readyTimeoutMs: number
  killGraceMs: number
  bashPath: string
  defaultTimeoutMs: number
  maxBytes: number
  maxLines: number
}

export const DEFAULT_WORLD_OPTIONS: WorldOptions = {
  keepaliveMs: 5000, readyTimeoutMs: 15_000, killGraceMs: 2000, bashPath: 'bash', defaultTimeoutMs: 120_000, maxBytes: 30_000, maxLines: 400,
}

/** `spec` with its key files made absolute against `cwd` and the defaults filled in (what `world/select` logs). */
export function resolveSpec(spec: WorldSpec, cwd = process.cwd()): Required<WorldSpec> {
  const file = (p: string | undefined, fallback: string) => {
    if (!p) return path.join(homedir(), '.ssh', fallback)
    if (p === '~' || p.startsWith('~/')) return path.join(homedir(), p.slice(1))
    return path.resolve(cwd, p)
  }
  parseWorldUrl(spec.url)
  return { url: spec.url, identity: file(spec.identity, 'id_ed25519'), knownHosts: file(spec.knownHosts, 'known_hosts') }
}

/** The remote machine is the sandbox: commands run as the remote user, unconfined there. */
const REMOTE_SANDBOX: SandboxSeam = {
  probe: () => Promise.resolve({ mechanism: null, detail: 'remote world: the remote machine is the sandbox (no local confinement applies)' }),
  wrap: (argv) => Promise.resolve(argv),
}

/**
 * A session's SSH world: one connection, the fs / subprocess / shell providers over it,
 * and a remote temp directory (`/tmp/dsh-USER/ID`, mode 0700) that stands in for the
 * policy's local temp root. `open` checks the whole chain (key, host key, login, SFTP,
 * root) before anything runs.
 */
export class SshWorld implements World {
  readonly id: string
  readonly target: WorldTarget
  readonly subprocess: SshSubprocess
  fs!: SshFs
  shell!: ShellSeam
  private fiber: Fiber | undefined
  private tmp = ''

  private constructor(readonly spec: Required<WorldSpec>, readonly conn: SshConnection, private readonly options: WorldOptions) {
    this.target = conn.target
    this.id = formatTarget(this.target)
    this.subprocess = new SshSubprocess(conn, { killGraceMs: options.killGraceMs })
  }

  /** Maps a session policy (local temp root) onto this world (its remote temp dir). */
  policy(policy: ExecPolicy): ExecPolicy {
    const local = policy.tmpRoot
    const roots = policy.writableRoots.map((r) => (r === local ? this.tmp : r))
    return { ...policy, writableRoots: roots, ...(local ? { tmpRoot: this.tmp } : {}) }
  }

  /** Connects and checks the world; `createRoot` makes a missing root (mkdir -p) instead of refusing it. */
  static async open(ctx: Context, spec: WorldSpec, key: string, options: WorldOptions = DEFAULT_WORLD_OPTIONS, createRoot = false): Promise<SshWorld> {
    const full = resolveSpec(spec)
    const target = parseWorldUrl(full.url)
    const conn = new SshConnection({ target, identity: full.identity, knownHosts: full.knownHosts, keepaliveMs: options.keepaliveMs, readyTimeoutMs: options.readyTimeoutMs })
    const world = new SshWorld(full, conn, options)
    try {
      await world.start(ctx, key, createRoot)
    } catch (error) {
      conn.close()
      throw error
    }
    return world
  }

  private async start(ctx: Context, key: string, createRoot: boolean): Promise<void> {
    const sftp = await this.conn.sftp()
    const home = await new Promise<string>((resolve, reject) => sftp.realpath('.', (e, p) => (e ? reject(e) : resolve(p))))
    const fs = new SshFs(this.conn, home, (p) => this.policy(p))
    if (createRoot) await fs.ensureDir(this.target.root)
    const root = await fs.stat(this.target.root)
    if (root?.type !== 'directory') {
      throw new DshError('WORLD_ROOT_MISSING', `${this.id}: the root ${this.target.root} ${root ? 'is not a directory' : 'does not exist'} on the remote`, {
        hint: `create it first (ssh ${this.target.user}@${this.target.host} mkdir -p ${this.target.root})`,
      })
    }
    this.tmp = path.posix.join('/tmp', `dsh-${this.target.user}`, key.replace(/[^A-Za-z0-9._-]/g, '_'))
    await this.conn.fire(`umask 077; mkdir -p ${shq(this.tmp)}`)
    this.fs = fs
    const { options } = this
    const subprocess = this.subprocess
    const tmp = this.tmp
    // the shell seam's engine (output bounds, jobs, status lines) over this world's processes;
    // its spill files stay on the host, in the session's local temp root
    let shell: ShellSeam | undefined
    this.fiber = ctx.plugin({
      name: `world-ssh:${this.id}`,
      apply: (c: Context) => {
        shell = new LocalShell(c.isolate('shell'), subprocess, REMOTE_SANDBOX, {
          bashPath: options.bashPath, defaultTimeoutMs: options.defaultTimeoutMs, maxBytes: options.maxBytes, maxLines: options.maxLines,
          env: {}, baseEnv: () => ({}), tmpDir: () => tmp,
          spillDir: (policy) => policy.tmpRoot || path.join(process.env.TMPDIR || '/tmp', 'dsh'),
        })
      },
    })
    await this.fiber
    if (!shell) throw new DshError('WORLD_INTERNAL', 'the shell of the world did not start')
    this.shell = shell
  }

  /** Kills the world's jobs, removes its temp dir and closes the connection. */
  async close(): Promise<void> {
    await this.shell?.killAll().catch(() => undefined)
    await this.fiber?.dispose()
    await this.conn.reapOrphans()
    if (this.tmp) await this.conn.fire(`rm -rf ${shq(this.tmp)}`).catch(() => undefined)
    this.conn.close()
  }
}
