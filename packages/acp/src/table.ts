import type { SessionState } from './state.js'

/**
 * The sessions open on one connection, with their lifecycle serialised per id: an open
 * that arrives while a close of the same id runs waits for it and then opens afresh
 * (never adopting the session object being closed); a close that arrives while an open
 * runs waits for it and closes what it opened. Concurrent opens share one opening,
 * concurrent closes one closing.
 */
export class SessionTable {
  private readonly states = new Map<string, SessionState>()
  private readonly opening = new Map<string, Promise<SessionState>>()
  private readonly closing = new Map<string, Promise<void>>()

  get(id: string): SessionState | undefined {
    return this.states.get(id)
  }

  values(): SessionState[] {
    return [...this.states.values()]
  }

  /** Every id open or being opened here. */
  ids(): string[] {
    return [...new Set([...this.states.keys(), ...this.opening.keys()])]
  }

  set(state: SessionState): void {
    this.states.set(state.id, state)
  }

  /** Drops `state` if it is still the one open under its id. */
  drop(state: SessionState): boolean {
    if (this.states.get(state.id) !== state) return false
    this.states.delete(state.id)
    return true
  }

  /** The open state of `id`, or the shared opening of it by `load` (after any close of `id` has finished). */
  open(id: string, load: () => Promise<SessionState>): Promise<SessionState> {
    const open = this.states.get(id)
    if (open && !this.closing.has(id)) return Promise.resolve(open)
    let pending = this.opening.get(id)
    if (!pending) {
      const before = this.closing.get(id) ?? Promise.resolve()
      pending = before.then(() => this.states.get(id) ?? load()).finally(() => this.opening.delete(id))
      this.opening.set(id, pending)
    }
    return pending
  }

  /**
   * Closes `id` with `run` once any opening of it has settled; undefined when the id is
   * neither open nor opening here. `run` gets the state already dropped from the table.
   */
  close(id: string, run: (state: SessionState) => Promise<void>): Promise<void> | undefined {
    const pending = this.closing.get(id)
    if (pending) return pending
    const state = this.states.get(id)
    const opening = this.opening.get(id)
    if (!state && !opening) return undefined
    if (state) this.states.delete(id)
    const done = (async () => {
      const target = state ?? await opening!.then((s) => (this.drop(s) ? s : undefined), () => undefined)
      if (target) await run(target)
    })().finally(() => this.closing.delete(id))
    this.closing.set(id, done)
    return done
  }
}
