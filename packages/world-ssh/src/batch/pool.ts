import type { Host } from './input.js'

export interface Slot { host: Host; index: number }

/**
 * The hosts of a batch and their free slots. A failed host leaves the pool: its slots
 * are never handed out again, and waiters get undefined once no live host is left.
 */
export class HostPool {
  private readonly free: number[]
  private readonly dead = new Set<number>()
  private readonly waiters: ((slot: Slot | undefined) => void)[] = []

  constructor(readonly hosts: readonly Host[]) {
    this.free = hosts.map((h) => h.slots)
  }

  get alive(): number {
    return this.hosts.length - this.dead.size
  }

  /** A slot on the live host with the most free slots; waits when all are busy; undefined when none is alive. */
  acquire(): Promise<Slot | undefined> {
    const slot = this.take()
    if (slot || this.alive === 0) return Promise.resolve(slot)
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  private take(): Slot | undefined {
    let best = -1
    for (let i = 0; i < this.hosts.length; i++) {
      if (this.dead.has(i) || this.free[i]! <= 0) continue
      if (best === -1 || this.free[i]! > this.free[best]!) best = i
    }
    if (best === -1) return undefined
    this.free[best]!--
    return { host: this.hosts[best]!, index: best }
  }

  release(slot: Slot): void {
    this.free[slot.index]!++
    this.wake()
  }

  /** Takes the slot's host out of the pool. */
  fail(slot: Slot): void {
    this.dead.add(slot.index)
    this.wake()
  }

  private wake(): void {
    while (this.waiters.length) {
      const slot = this.take()
      if (!slot && this.alive > 0) return
      this.waiters.shift()!(slot)
    }
  }
}
