import { DshError } from '@dsh/protocol'

/** A counting semaphore whose waits can be aborted; permits are handed over in FIFO order. */
export class Semaphore {
  private free: number
  private readonly waiting: { grant: () => void }[] = []

  constructor(readonly permits: number) {
    this.free = permits
  }

  /** Permits in use. */
  get busy(): number {
    return this.permits - this.free
  }

  /** Resolves with a release function (idempotent); rejects ABORTED when `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new DshError('ABORTED', 'cancelled while waiting for a free slot'))
    const release = once(() => this.release())
    if (this.free > 0) {
      this.free--
      return Promise.resolve(release)
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort)
          resolve(release)
        },
      }
      const onAbort = () => {
        const index = this.waiting.indexOf(waiter)
        if (index >= 0) this.waiting.splice(index, 1)
        reject(new DshError('ABORTED', 'cancelled while waiting for a free slot'))
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.waiting.push(waiter)
    })
  }

  private release(): void {
    const next = this.waiting.shift()
    if (next) next.grant()
    else this.free++
  }
}

function once(fn: () => void): () => void {
  let done = false
  return () => {
    if (done) return
    done = true
    fn()
  }
}
