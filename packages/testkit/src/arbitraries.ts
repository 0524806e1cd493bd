/**
 * fast-check arbitraries for model requests, shared by the provider adapters' body tests
 * (the `@dsh/testkit/arbitraries` entry; it needs fast-check, a dev dependency, so the
 * runtime entry does not import it).
 *
 * - `modelMessage` covers every shape a history message takes: user text and images, assistant
 *   text (empty too), reasoning unsigned, signed and redacted, tool calls whose arguments are
 *   JSON objects, other JSON or not JSON; tool results with text, images or nothing, errors or
 *   not. Tool results are weighted up, as runs of them merge in some wire formats.
 * - `historyOp` is one change to a conversation between two requests (see `applyOps`).
 * - `freezeDeep` freezes a value and everything it holds, as the session deriver hands
 *   messages out.
 */
import fc from 'fast-check'
import type { GenerateRequest, ModelMessage } from '@dsh/protocol'

/** Any string (lone surrogates, U+2028, quotes and backslashes included), up to 40 units. */
export const text = fc.string({ unit: 'binary', maxLength: 40 })
const textPart = text.map((t) => ({ type: 'text' as const, text: t }))
const image = fc.record({ type: fc.constant('image' as const), mimeType: fc.constantFrom('image/png', 'image/jpeg'), data: fc.base64String({ maxLength: 12 }) })
const args = fc.oneof(text, fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)), fc.dictionary(text, fc.jsonValue({ maxDepth: 2 })).map((v) => JSON.stringify(v)))
const block = fc.oneof(
  textPart,
  fc.constant({ type: 'text' as const, text: '' }),
  fc.record({ type: fc.constant('reasoning' as const), text }),
  fc.record({ type: fc.constant('reasoning' as const), text, signature: text }),
  fc.record({ type: fc.constant('reasoning' as const), text: fc.constant(''), redacted: text }),
  fc.record({ type: fc.constant('tool-call' as const), id: text, name: fc.constantFrom('bash', 'read'), arguments: args }),
)
const user = fc.record({ role: fc.constant('user' as const), content: fc.array(fc.oneof(textPart, image), { maxLength: 3 }) })
const assistant = fc.record({ role: fc.constant('assistant' as const), content: fc.array(block, { maxLength: 4 }) })
const tool = fc.record({ role: fc.constant('tool' as const), callId: text, name: text, content: fc.array(fc.oneof(textPart, image), { maxLength: 3 }), isError: fc.boolean() })

export const modelMessage: fc.Arbitrary<ModelMessage> = fc.oneof({ arbitrary: user, weight: 2 }, { arbitrary: assistant, weight: 2 }, { arbitrary: tool, weight: 3 })

/** A request's model config for `provider`, every optional knob present or not. */
export function modelConfig(provider: string): fc.Arbitrary<GenerateRequest['config']> {
  return fc.record({
    provider: fc.constant(provider), model: text,
    maxTokens: fc.option(fc.integer({ min: 1, max: 100_000 }), { nil: undefined }),
    temperature: fc.option(fc.double({ min: 0, max: 2, noNaN: true }), { nil: undefined }),
    reasoningEffort: fc.option(fc.constantFrom('off', 'low', 'medium', 'high', 'max' as const), { nil: undefined }),
  }, { requiredKeys: ['provider', 'model'] }) as fc.Arbitrary<GenerateRequest['config']>
}

export const toolSpecs = fc.array(fc.record({ name: text, description: text, parameters: fc.dictionary(text, fc.jsonValue({ maxDepth: 2 })) }), { maxLength: 3 }) as fc.Arbitrary<GenerateRequest['tools']>

export function freezeDeep<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) freezeDeep(v)
  }
  return value
}

/**
 * One change between two requests of a conversation: append `n` messages from the pool,
 * cut the history to `keep`, change the system prompt, or send one unfrozen message at the
 * end (dropped again before the next change).
 */
export type HistoryOp =
  | { kind: 'append'; n: number }
  | { kind: 'cut'; keep: number }
  | { kind: 'system'; system: string }
  | { kind: 'unfrozen'; m: ModelMessage }

export const historyOp: fc.Arbitrary<HistoryOp> = fc.oneof(
  fc.record({ kind: fc.constant('append' as const), n: fc.integer({ min: 1, max: 30 }) }),
  fc.record({ kind: fc.constant('cut' as const), keep: fc.integer({ min: 1, max: 60 }) }),
  fc.record({ kind: fc.constant('system' as const), system: text }),
  fc.record({ kind: fc.constant('unfrozen' as const), m: modelMessage }),
)

/**
 * Plays `ops` on a conversation that starts with `pool[0]` (frozen messages; appends cycle
 * through the pool, so histories diverge while sharing their first message), calling `send`
 * with each request's history and system prompt.
 */
export function applyOps(pool: readonly ModelMessage[], system: string, ops: readonly HistoryOp[], send: (messages: ModelMessage[], system: string) => void): void {
  let history: ModelMessage[] = [pool[0]!]
  let current = system
  for (const o of ops) {
    if (o.kind === 'append') for (let i = 0; i < o.n; i++) history.push(pool[(history.length + i) % pool.length]!)
    else if (o.kind === 'cut') history = history.slice(0, Math.max(1, Math.min(o.keep, history.length)))
    else if (o.kind === 'system') current = o.system
    else history = [...history, o.m]
    send(history.slice(), current)
    // an unfrozen message is sent once: drop it before the next change
    history = history.filter((m) => Object.isFrozen(m))
  }
}
