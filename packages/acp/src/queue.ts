import type { ErrorInfo, TurnEndReason } from '@dsh/protocol'

/** The prompt whose turn streams now. Updates of a turn are sent only while its token is open. */
export interface TurnToken {
  cancelled: boolean
  /** The host turn this prompt became (its `turn/start`), once seen. */
  turn?: number | undefined
  /** The `turn/end` of the latest turn this prompt's work ran (a late steer may start one more). */
  end?: { reason: TurnEndReason; error?: ErrorInfo | undefined } | undefined
  usage: { input: number; output: number; thought: number; cacheRead: number; cacheWrite: number; steps: number }
  /** Calls of this turn the client was shown (`tool_call`) without a final status yet. */
  readonly unfinished: Set<string>
  /** Calls whose `in_progress` was sent. */
  readonly started: Set<string>
}

export function newTurn(): TurnToken {
  return { cancelled: false, usage: { input: 0, output: 0, thought: 0, cacheRead: 0, cacheWrite: 0, steps: 0 }, unfinished: new Set(), started: new Set() }
}

/**
 * One session's prompts, one at a time, in the order they acquire: `acquire()` resolves
 * once every earlier holder has released, with this holder's release.
 */
export class TurnQueue {
  private tail: Promise<void> = Promise.resolve()

  acquire(): Promise<() => void> {
    const previous = this.tail
    let release: () => void = () => undefined
    this.tail = new Promise<void>((resolve) => { release = resolve })
    return previous.then(() => release)
  }
}
