import type { JsonRpcId } from '@agentclientprotocol/sdk/unstable'

/** At most this many sessions' cancel counts and unanswered prompts' arrival epochs are kept (hostile input stays bounded). */
const MAX_ENTRIES = 4096

function remember<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.delete(key)
  map.set(key, value)
  if (map.size > MAX_ENTRIES) map.delete(map.keys().next().value as K)
}

const idKey = (id: JsonRpcId) => `${typeof id}:${String(id)}`

/**
 * Cancel epochs in arrival order. The SDK runs handlers concurrently, so the order in
 * which a `session/cancel` and a `session/prompt` of the same read reach their handlers
 * says nothing; `observe` sees every incoming frame in the order it was read (a tap on
 * the connection's readable), counts cancels per session, and stamps each prompt with
 * the count at its arrival. A prompt runs only while no cancel arrived after it.
 */
export class CancelEpochs {
  private readonly counts = new Map<string, number>()
  private readonly prompts = new Map<string, { sessionId: string; epoch: number }>()

  /** An incoming frame, in read order; returns the session id when it is a `session/cancel`. */
  observe(frame: unknown): string | undefined {
    if (!frame || typeof frame !== 'object') return undefined
    const { method, params, id } = frame as { method?: unknown; params?: { sessionId?: unknown } | null; id?: JsonRpcId }
    const sessionId = params && typeof params === 'object' ? params.sessionId : undefined
    if (typeof sessionId !== 'string') return undefined
    if (method === 'session/cancel' && id === undefined) {
      remember(this.counts, sessionId, this.current(sessionId) + 1)
      return sessionId
    }
    if (method === 'session/prompt' && (typeof id === 'string' || typeof id === 'number')) {
      remember(this.prompts, idKey(id), { sessionId, epoch: this.current(sessionId) })
    }
    return undefined
  }

  /** The epoch a prompt saw when it arrived (now, for a prompt the tap did not see); forgets it. */
  arrival(requestId: JsonRpcId, sessionId: string): number {
    const key = idKey(requestId)
    const seen = this.prompts.get(key)
    this.prompts.delete(key)
    return seen?.sessionId === sessionId ? seen.epoch : this.current(sessionId)
  }

  current(sessionId: string): number {
    return this.counts.get(sessionId) ?? 0
  }
}
