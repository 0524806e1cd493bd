import { createHash } from 'node:crypto'
import { textOf, type AssistantBlock, type SessionEvent } from '@dsh/protocol'
import { quote } from './quote.js'

/**
 * `session/fork` cut points, pure. `_meta.jetbrains.air.fork` names an assistant message:
 * `{version: 1, messageId, messageFingerprint?, messageOccurrence?}`. `messageId` is the
 * ACP message id `<turn>:<step>` (an id `<id>:segment:<n>` matches `<id>`);
 * `messageFingerprint` is `sha256:` + the hex SHA-256 of the message's text;
 * `messageOccurrence` (from 1) picks among equal ids. The cut is inclusive: the fork keeps
 * the message and everything logged before it. Every bad reference is a ForkError
 * (→ JSON-RPC -32602), never a silent copy of the whole session.
 */
export interface ForkReference {
  version: 1
  messageId: string
  messageFingerprint?: string
  messageOccurrence?: number
}

export class ForkError extends Error {
  override name = 'ForkError'
}

export const FORK_META_VERSION = 1

/** The fork reference in a request's `_meta`, or undefined when there is none (a whole-session fork). */
export function parseForkMeta(meta: unknown): ForkReference | undefined {
  const fork = (meta as { jetbrains?: { air?: { fork?: unknown } } } | null | undefined)?.jetbrains?.air?.fork
  if (fork === undefined || fork === null) return undefined
  if (typeof fork !== 'object' || Array.isArray(fork)) throw new ForkError('_meta.jetbrains.air.fork must be an object')
  const ref = fork as Record<string, unknown>
  if (ref.version !== FORK_META_VERSION) throw new ForkError(`_meta.jetbrains.air.fork.version must be ${FORK_META_VERSION}, got ${quote(ref.version)}`)
  if (typeof ref.messageId !== 'string' || !ref.messageId) throw new ForkError('_meta.jetbrains.air.fork.messageId must be a non-empty string')
  const out: ForkReference = { version: 1, messageId: ref.messageId }
  if (ref.messageFingerprint !== undefined) {
    if (typeof ref.messageFingerprint !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(ref.messageFingerprint)) {
      throw new ForkError('_meta.jetbrains.air.fork.messageFingerprint must be "sha256:" followed by 64 lowercase hex digits')
    }
    out.messageFingerprint = ref.messageFingerprint
  }
  if (ref.messageOccurrence !== undefined) {
    if (!Number.isInteger(ref.messageOccurrence) || (ref.messageOccurrence as number) < 1) {
      throw new ForkError('_meta.jetbrains.air.fork.messageOccurrence must be an integer from 1')
    }
    out.messageOccurrence = ref.messageOccurrence as number
  }
  return out
}

/** `sha256:<hex>` of a message's text (its text blocks, concatenated). */
export function messageFingerprint(text: string): string {
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`
}

function baseId(messageId: string): string {
  const at = messageId.indexOf(':segment:')
  return at < 0 ? messageId : messageId.slice(0, at)
}

/** The seq to cut at (inclusive): the referenced persisted `assistant/message`. */
export function forkCut(events: readonly SessionEvent[], ref: ForkReference): number {
  const id = baseId(ref.messageId)
  let matches = events.filter((e) => e.type === 'assistant/message' && (e.data as { id: string }).id === id)
  if (!matches.length) throw new ForkError(`no assistant message ${quote(ref.messageId)} in this session`)
  if (ref.messageOccurrence !== undefined) {
    const picked = matches[ref.messageOccurrence - 1]
    if (!picked) throw new ForkError(`assistant message ${quote(ref.messageId)} occurs ${matches.length} time(s), not ${ref.messageOccurrence}`)
    matches = [picked]
  }
  if (ref.messageFingerprint !== undefined) {
    matches = matches.filter((e) => messageFingerprint(textOf((e.data as unknown as { content: AssistantBlock[] }).content)) === ref.messageFingerprint)
    if (!matches.length) throw new ForkError(`the fingerprint does not match assistant message ${quote(ref.messageId)}`)
  }
  if (matches.length > 1) throw new ForkError(`assistant message ${quote(ref.messageId)} is ambiguous (${matches.length} matches); give messageOccurrence`)
  return matches[0]!.seq
}
