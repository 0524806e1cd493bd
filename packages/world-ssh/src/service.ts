import { Service, type Context } from '@deepseek-ai/cordis'
import { DshError } from '@dsh/protocol'
import type { Session } from '@dsh/core'
import { inWorld, isInside } from '@dsh/exec'
import { z } from 'zod'
import { parseWorldUrl, type WorldSpec } from './url.js'
import { resolveSpec, SshWorld, type WorldOptions } from './world.js'

declare module '@dsh/protocol' {
  interface SessionEventMap {
    /** The session's execution world from here on (resume reopens it). Key file paths, never key material. */
    'world/select': { url: string; identity: string; knownHosts: string }
  }
}
declare module '@deepseek-ai/cordis' {
  interface Context { worlds: WorldService }
}

/** settings.yaml `world:` — the default world of new sessions. */
export const WorldSettings = z.strictObject({
  url: z.string().min(1),
  identity: z.string().min(1).optional(),
  knownHosts: z.string().min(1).optional(),
})

/**
 * The world a surface asked for: flags win over settings.yaml's `world` (pass no settings
 * for a resumed session: it keeps its logged world). Key files are resolved against `cwd`.
 * Undefined when neither names a world; WORLD_URL / SETTINGS_INVALID name what is wrong.
 */
export function worldSpecOf(flags: Partial<Record<keyof WorldSpec, string | undefined>>, settings: unknown, cwd: string): WorldSpec | undefined {
  let base: { url?: string | undefined; identity?: string | undefined; knownHosts?: string | undefined } = {}
  const raw = (settings as { world?: unknown } | undefined)?.world
  if (raw !== undefined) {
    const parsed = WorldSettings.safeParse(raw)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!
      throw new DshError('SETTINGS_INVALID', `settings.yaml: world${issue.path.length ? '.' + issue.path.join('.') : ''}: ${issue.message}`, {
        hint: 'world: {url: ssh://USER@HOST[:PORT]/ROOT, identity: FILE, knownHosts: FILE}',
      })
    }
    base = parsed.data
  }
  const url = flags.url ?? base.url
  if (!url) {
    if (flags.identity || flags.knownHosts) throw new DshError('USAGE', '--identity and --known-hosts need a world (--world ssh://USER@HOST/ROOT)')
    return undefined
  }
  const identity = flags.identity ?? (flags.url ? undefined : base.identity)
  const knownHosts = flags.knownHosts ?? (flags.url ? undefined : base.knownHosts)
  return resolveSpec({ url, ...(identity ? { identity } : {}), ...(knownHosts ? { knownHosts } : {}) }, cwd)
}

/**
 * `ctx.worlds`: which world each session's tool calls act on. A session with a logged
 * `world/select` runs every tool body inside that world (the seams route there); its
 * world is reopened on first use after a resume, and a world that cannot be reached
 * fails the call — never a silent fallback to the local machine. Closed with the session.
 */
export class WorldService extends Service {
  private readonly open_ = new Map<string, Promise<SshWorld>>()

  constructor(ctx: Context, private readonly options: WorldOptions) {
    super(ctx, 'worlds')
    ctx.on('tools/execute', async (call, next) => {
      const world = await this.forSession(call.sessionId)
      return world ? inWorld(world, next) : next()
    })
    ctx.on('session/closed', (session: Session) => { void this.release(session.id) })
    ctx.effect(() => () => { void this.closeAll() })
  }

  /** The remote root a session in `spec`'s world works in (its `cwd`); WORLD_URL when the URL is bad. */
  workspace(spec: WorldSpec): string {
    return parseWorldUrl(spec.url).root
  }

  /**
   * Moves `session` into `spec`'s world: connects and checks it (key, host key, login,
   * root), then logs `world/select`. The session's cwd must be the root or below it.
   */
  async select(session: Session, spec: WorldSpec, options: { createRoot?: boolean } = {}): Promise<SshWorld> {
    const full = resolveSpec(spec)
    const root = parseWorldUrl(full.url).root
    if (!isInside(root, session.cwd)) {
      throw new DshError('WORLD_WORKSPACE', `the session's workspace ${session.cwd} is not under the world's root ${root}`, {
        hint: `create the session with cwd ${root} (ctx.worlds.workspace(spec))`,
      })
    }
    await this.release(session.id)
    const opening = SshWorld.open(this.ctx, full, session.id, this.options, options.createRoot)
    this.open_.set(session.id, opening)
    try {
      const world = await opening
      session.append('world/select', { ...full })
      await session.flush()
      return world
    } catch (error) {
      this.open_.delete(session.id)
      throw error
    }
  }

  /** The session's world, reopened from its log when needed; undefined for the local world. */
  forSession(sessionId: string): Promise<SshWorld | undefined> {
    const opened = this.open_.get(sessionId)
    if (opened) return opened
    const session = this.ctx.sessions.get(sessionId)
    const logged = session?.last('world/select')
    if (!logged) return Promise.resolve(undefined)
    const spec = logged.data as { url: string; identity: string; knownHosts: string }
    const opening = SshWorld.open(this.ctx, spec, sessionId, this.options)
    this.open_.set(sessionId, opening)
    opening.catch(() => { if (this.open_.get(sessionId) === opening) this.open_.delete(sessionId) })
    return opening
  }

  /** `worldSpecOf` for surfaces that only hold `ctx.worlds`. */
  spec(flags: Partial<Record<keyof WorldSpec, string | undefined>>, settings: unknown, cwd: string): WorldSpec | undefined {
    return worldSpecOf(flags, settings, cwd)
  }

  /**
   * After a surface created or opened `session`: selects `spec`'s world when given, else
   * reopens the world its log names (a clear error now rather than at the first tool call).
   */
  async enter(session: Session, spec: WorldSpec | undefined): Promise<SshWorld | undefined> {
    return spec ? this.select(session, spec) : this.attach(session)
  }

  /** Reopens a resumed session's world now (a clear error up front instead of at the first tool call). */
  async attach(session: Session): Promise<SshWorld | undefined> {
    return this.forSession(session.id)
  }

  /** `ssh://…` of the session's world, or undefined (local), from the log. */
  describe(session: Session): string | undefined {
    return (session.last('world/select')?.data as { url?: string } | undefined)?.url
  }

  private async release(sessionId: string): Promise<void> {
    const opening = this.open_.get(sessionId)
    if (!opening) return
    this.open_.delete(sessionId)
    const world = await opening.catch(() => undefined)
    await world?.close()
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.open_.keys()].map((id) => this.release(id)))
  }
}
