import { existsSync, lstatSync, realpathSync } from 'node:fs'
import { Service, type Context } from '@deepseek-ai/cordis'
import { DshError, type ExecPolicy } from '@dsh/protocol'
import { writableRootsOf } from '../fs/paths.js'
import type { SandboxShare, SubprocessSeam } from '../subprocess/types.js'
import { outsideLinks, scanLinkedFiles, type LinkedFile } from './hardlinks.js'
import { planHolds, planLinkMounts, type LinkPlan } from './link-plan.js'
import type { SandboxMechanism, SandboxSeam, SandboxStatus } from './types.js'

export const SANDBOX_HINT = 'Install bubblewrap (e.g. `apt-get install bubblewrap`), or choose the danger-full-access '
  + 'permission mode knowingly (commands then run unconfined).'

/** The local provider of `ctx.sandbox`: the first candidate mechanism whose probe passes. */
export class LocalSandbox extends Service implements SandboxSeam {
  private status: Promise<{ status: SandboxStatus; mechanism: SandboxMechanism | null }> | undefined
  private readonly scans = new Map<string, Promise<LinkedFile[]>>()
  private readonly plans = new Map<string, Promise<LinkPlan>>()

  /**
   * `masked()`: the files to make unreadable inside; `maskedDirs()`: directories every file of
   * which is secret (hidden whole, one mount each). Both read at every wrap.
   */
  constructor(ctx: Context, private readonly subprocess: SubprocessSeam, private readonly candidates: SandboxMechanism[],
    private readonly masked: () => string[] = () => [], private readonly maskedDirs: () => string[] = () => []) {
    super(ctx, 'sandbox')
  }

  private detect() {
    this.status ??= (async () => {
      const failures: string[] = []
      for (const mechanism of this.candidates) {
        const result = await mechanism.probe(this.subprocess)
        if (result.ok) return { status: { mechanism: mechanism.name, detail: `${mechanism.name} works` }, mechanism }
        failures.push(result.reason)
      }
      const detail = failures.length ? failures.join('; ') : 'no sandbox mechanism is configured for this platform'
      return { status: { mechanism: null, detail }, mechanism: null }
    })()
    return this.status
  }

  async probe(): Promise<SandboxStatus> {
    return (await this.detect()).status
  }

  async wrap(argv: string[], policy: ExecPolicy, cwd = policy.cwd): Promise<string[]> {
    return (await this.confine(argv, policy, cwd)).argv
  }

  /**
   * Computes the confinement afresh on every call (secrets, hidden directories, hard links,
   * which writable roots exist), so a call's `share` is exactly what a per-call sandbox of it
   * would be; `identity` adds the inodes of every path the skeleton mounts over or binds, so
   * a file replaced under the same name (an atomic rewrite of the credentials detaches the
   * mask bound over the old inode) or a recreated workspace yields a different sandbox.
   */
  async confine(argv: string[], policy: ExecPolicy, cwd = policy.cwd): Promise<{ argv: string[]; share?: SandboxShare }> {
    if (policy.mode === 'danger-full-access') return { argv }
    const { status, mechanism } = await this.detect()
    if (!mechanism) {
      throw new DshError('SANDBOX_UNAVAILABLE',
        `The ${policy.mode} permission mode runs commands in a sandbox, but no sandbox works here (${status.detail}).`,
        { hint: SANDBOX_HINT })
    }
    const hiddenDirs = [...new Set(this.maskedDirs().flatMap((dir) => {
      try {
        return lstatSync(dir).isDirectory() ? [realpathSync(dir)] : []
      } catch {
        return [] // not there yet
      }
    }))]
    const hidden = (file: string) => hiddenDirs.some((dir) => file.startsWith(`${dir}/`))
    const secrets: string[] = []
    const secretInodes = new Set<string>()
    for (const file of this.masked()) {
      try {
        const real = realpathSync(file)
        secretInodes.add(inodeOf(real))
        secrets.push(real)
      } catch {
        // gone since it was listed: nothing to mask
      }
    }
    // hard links in the workspace and the writable roots ("/" is never scanned): to a secret
    // masked, and under workspace-write, to a file outside the writable roots read-only
    const writable = policy.mode === 'workspace-write' ? writableRootsOf(policy) : []
    const scans = await this.scanRoots([...new Set([policy.cwd, ...writable])].filter((r) => r !== '/'))
    const masked = [...secrets, ...[...scans.values()].flat().filter((f) => secretInodes.has(f.inode) && stillIs(f)).map((f) => f.path)]
      .filter((f) => !hidden(f)) // covered by its directory's mount (its inode still masks links elsewhere)
    const links = await this.linkPlan(writable.filter((r) => scans.has(r)), scans, secretInodes)
    const confine = { masked: [...new Set(masked.filter((f) => existsSync(f)))], readOnly: links.readOnly, writable: links.writable, hiddenDirs }
    const wrapped = mechanism.wrap(argv, policy, cwd, confine)
    if (!mechanism.share) return { argv: wrapped }
    const bound = [...writable, ...hiddenDirs, ...confine.masked, ...confine.readOnly, ...confine.writable]
    const identity = bound.map((p) => { try { return inodeOf(p) } catch { return '-' } }).join(' ')
    return { argv: wrapped, share: mechanism.share(argv, policy, confine, identity) }
  }

  /** The mounts for the outside links of these writable roots: planned once per set of roots, again when a planned path changed. */
  private async linkPlan(roots: string[], scans: Map<string, LinkedFile[]>, secretInodes: ReadonlySet<string>): Promise<LinkPlan> {
    const key = roots.join('\0')
    const cached = this.plans.get(key)
    if (cached) {
      const plan = await cached
      if (planHolds(plan)) return plan
    }
    const linked = roots.map((r) => scans.get(r)!)
    const all = outsideLinks(linked)
    const outside = all.filter((f) => !secretInodes.has(f.inode) && stillIs(f))
    // only links known to stay inside may be made writable again; a secret's links are masked after
    const far = new Set(all.map((f) => f.path))
    const inside = new Set(linked.flat().filter((f) => !far.has(f.path) && stillIs(f)).map((f) => f.path))
    const plan = planLinkMounts(outside, roots, { inside })
    this.plans.set(key, plan)
    return plan
  }

  /**
   * The linked files under each existing root. Each root is scanned once per service
   * (cached); a call only re-checks the few files found (still there, same inode).
   */
  private async scanRoots(roots: readonly string[]): Promise<Map<string, LinkedFile[]>> {
    const out = new Map<string, LinkedFile[]>()
    await Promise.all(roots.filter((r) => existsSync(r)).map(async (root) => {
      let scan = this.scans.get(root)
      if (!scan) {
        scan = scanLinkedFiles(root, this.subprocess)
        this.scans.set(root, scan)
        scan.catch(() => this.scans.delete(root))
      }
      out.set(root, await scan)
    }))
    return out
  }
}

function stillIs(f: LinkedFile): boolean {
  try {
    return inodeOf(f.path) === f.inode
  } catch {
    return false
  }
}

function inodeOf(file: string): string {
  const st = lstatSync(file)
  return `${st.dev}:${st.ino}`
}
