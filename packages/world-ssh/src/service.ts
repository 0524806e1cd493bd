import { Service, type Context } from '@deepseek-ai/cordis'
import { DshError } from '@dsh/protocol'
import type { Session } from '@dsh/core'
import { inWorld, isInside } from '@dsh/exec'
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
  async select(session: Session, spec: WorldSpec): Promise<SshWorld> {
    const full = resolveSpec(spec)
    const root = parseWorldUrl(full.url).root
    if (!isInside(root, session.cwd)) {
      throw new DshError('WORLD_WORKSPACE', `the session's workspace ${session.cwd} is not under the world's root ${root}`, {
        hint: `create the session with cwd ${root} (ctx.worlds.workspace(spec))`,
      })
    }
    await this.release(session.id)
    const opening = SshWorld.open(this.ctx, full, session.id, this.options)
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
