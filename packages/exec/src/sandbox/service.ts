import { realpathSync } from 'node:fs'
import { Service, type Context } from '@deepseek-ai/cordis'
import { DshError, type ExecPolicy } from '@dsh/protocol'
import type { SubprocessSeam } from '../subprocess/types.js'
import type { SandboxMechanism, SandboxSeam, SandboxStatus } from './types.js'

export const SANDBOX_HINT = 'Install bubblewrap (e.g. `apt-get install bubblewrap`), or choose the danger-full-access '
  + 'permission mode knowingly (commands then run unconfined).'

/** The local provider of `ctx.sandbox`: the first candidate mechanism whose probe passes. */
export class LocalSandbox extends Service implements SandboxSeam {
  private status: Promise<{ status: SandboxStatus; mechanism: SandboxMechanism | null }> | undefined

  /** `masked()`: the files to make unreadable inside, read at every wrap. */
  constructor(ctx: Context, private readonly subprocess: SubprocessSeam, private readonly candidates: SandboxMechanism[], private readonly masked: () => string[] = () => []) {
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
    if (policy.mode === 'danger-full-access') return argv
    const { status, mechanism } = await this.detect()
    if (!mechanism) {
      throw new DshError('SANDBOX_UNAVAILABLE',
        `The ${policy.mode} permission mode runs commands in a sandbox, but no sandbox works here (${status.detail}).`,
        { hint: SANDBOX_HINT })
    }
    const masked = this.masked().flatMap((f) => { try { return [realpathSync(f)] } catch { return [] } })
    return mechanism.wrap(argv, policy, cwd, [...new Set(masked)])
  }
}
