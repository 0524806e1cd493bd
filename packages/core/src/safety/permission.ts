import { Service, type Context } from '@deepseek-ai/cordis'
import { DshError, PERMISSION_PRESETS, type ExecPolicy, type PermissionPreset } from '@dsh/protocol'
import { sessionTmpPath } from '../home/tmp.js'
import type { Session } from '../session/session.js'

declare module '@dsh/protocol' {
  interface SessionEventMap {
    /** The session's permission preset from this point on. */
    'permission/preset': { preset: string }
    /** Extra workspace roots (readable always, writable under workspace-write). */
    'workspace/roots': { roots: string[] }
  }
}
declare module '@deepseek-ai/cordis' {
  interface Context { permission: PermissionService }
  interface Events { 'permission/changed'(session: Session, preset: PermissionPreset): void }
}

/**
 * `ctx.permission`: the session's permission preset (a logged fact, so resume and replay
 * recover it) and the execution policy derived from it.
 */
export class PermissionService extends Service {
  /** `network`: whether sandboxed commands may use the network (default: no network namespace of the host). */
  constructor(ctx: Context, private readonly defaultPreset: string, private readonly network = false) {
    super(ctx, 'permission')
    this.preset(defaultPreset)
  }

  /** The preset of a session that never chose one. */
  get defaultId(): string {
    return this.defaultPreset
  }

  presets(): readonly PermissionPreset[] {
    return PERMISSION_PRESETS
  }

  preset(id: string): PermissionPreset {
    const preset = PERMISSION_PRESETS.find((p) => p.id === id)
    if (!preset) {
      throw new DshError('UNKNOWN_PRESET', `unknown permission preset "${id}"`, { hint: `choose one of: ${PERMISSION_PRESETS.map((p) => p.id).join(', ')}` })
    }
    return preset
  }

  current(session: Session): PermissionPreset {
    const logged = session.last('permission/preset')
    return this.preset(logged ? (logged.data as { preset: string }).preset : this.defaultPreset)
  }

  /** Switches the preset (logged). A no-op when it is already current. */
  set(session: Session, id: string): PermissionPreset {
    const preset = this.preset(id)
    if (this.current(session).id === id && session.last('permission/preset')) return preset
    session.append('permission/preset', { preset: id })
    this.ctx.emit('permission/changed', session, preset)
    return preset
  }

  /** The session's temp root (TMPDIR of its commands, their spill files), per user; removed when the session closes. */
  static tmpRoot(sessionId: string): string {
    return sessionTmpPath(sessionId)
  }

  roots(session: Session): string[] {
    const logged = session.last('workspace/roots')
    return logged ? [...(logged.data as { roots: string[] }).roots] : []
  }

  /** UNSAFE_WORKSPACE when `preset` must not run in `cwd` (e.g. "/" under workspace-write); usable before a session exists. */
  checkWorkspace(presetId: string, cwd: string): void {
    const preset = this.preset(presetId)
    if (preset.sandbox === 'workspace-write' && cwd === '/') {
      throw new DshError('UNSAFE_WORKSPACE', 'the workspace is "/": workspace-write would make the whole filesystem writable', {
        hint: 'run dsh from a project directory, or choose read-only or danger-full-access knowingly',
      })
    }
  }

  /** The sandbox policy for calls in this session right now (pure: creates nothing). */
  policy(session: Session): ExecPolicy {
    const preset = this.current(session)
    this.checkWorkspace(preset.id, session.cwd)
    // only the path: the shell creates (and checks) it when a command first runs, so a
    // session that fails before then leaves no empty folder behind
    const tmpRoot = PermissionService.tmpRoot(session.id)
    return {
      mode: preset.sandbox,
      cwd: session.cwd,
      writableRoots: [session.cwd, ...this.roots(session), tmpRoot],
      tmpRoot,
      network: preset.sandbox === 'danger-full-access' || this.network,
    }
  }
}
