import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { GenerateRequest, ModelMessage } from '@dsh/protocol'
import { buildChatRequest, encodeChatRequest, serializeChatRequest } from '@dsh/llm-openai'

const text = fc.string({ unit: 'binary', maxLength: 40 })
const textPart = text.map((t) => ({ type: 'text' as const, text: t }))
const image = fc.record({ type: fc.constant('image' as const), mimeType: fc.constantFrom('image/png', 'image/jpeg'), data: fc.base64String({ maxLength: 12 }) })
const block = fc.oneof(
  textPart,
  fc.record({ type: fc.constant('reasoning' as const), text }),
  fc.record({ type: fc.constant('tool-call' as const), id: text, name: fc.constantFrom('bash', 'read'), arguments: text }),
)
const message: fc.Arbitrary<ModelMessage> = fc.oneof(
  fc.record({ role: fc.constant('user' as const), content: fc.array(fc.oneof(textPart, image), { minLength: 1, maxLength: 3 }) }),
  fc.record({ role: fc.constant('assistant' as const), content: fc.array(block, { minLength: 1, maxLength: 4 }) }),
  fc.record({ role: fc.constant('tool' as const), callId: text, name: text, content: fc.array(fc.oneof(textPart, image), { maxLength: 3 }), isError: fc.boolean() }),
)
const config = fc.record({
  provider: fc.constant('deepseek'), model: text,
  maxTokens: fc.option(fc.integer({ min: 1, max: 100_000 }), { nil: undefined }),
  temperature: fc.option(fc.double({ min: 0, max: 2, noNaN: true }), { nil: undefined }),
  reasoningEffort: fc.option(fc.constantFrom('off', 'low', 'medium', 'high', 'max' as const), { nil: undefined }),
}, { requiredKeys: ['provider', 'model'] })
const tools = fc.array(fc.record({ name: text, description: text, parameters: fc.dictionary(text, fc.jsonValue({ maxDepth: 2 })) }), { maxLength: 3 })

function freezeDeep<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) freezeDeep(v)
  }
  return value
}

const signal = new AbortController().signal
const same = (req: GenerateRequest) => expect(serializeChatRequest(req)).toBe(JSON.stringify(buildChatRequest(req)))
const sameBytes = (req: GenerateRequest): Uint8Array[] => {
  const chunks = encodeChatRequest(req)
  expect(Buffer.concat(chunks).toString('utf8')).toBe(JSON.stringify(buildChatRequest(req)))
  return chunks
}

describe('serializeChatRequest (the cached request body)', () => {
  it('is byte-identical to JSON.stringify(buildChatRequest(req)) for any request, frozen or not, on a cache hit too', () => {
    fc.assert(fc.property(config, text, tools, fc.array(message, { maxLength: 6 }), fc.boolean(), (cfg, system, tl, messages, frozen) => {
      const history = frozen ? messages.map(freezeDeep) : messages
      const req: GenerateRequest = { config: cfg as GenerateRequest['config'], system, tools: tl as GenerateRequest['tools'], messages: history, signal }
      same(req)
      same(req) // the second call reads the cache
    }), { numRuns: 300 })
  })

  it('a growing history reuses each frozen message and still matches after every append', () => {
    const history: ModelMessage[] = []
    const req = (): GenerateRequest => ({ config: { provider: 'deepseek', model: 'm', maxTokens: 10 }, system: 'sys', tools: [], messages: history.slice(), signal })
    for (let i = 0; i < 50; i++) {
      history.push(freezeDeep({ role: 'user', content: [{ type: 'text', text: `q${i} \u2028 "quoted" \\ ${'é'.repeat(i)}` }] }))
      history.push(freezeDeep({ role: 'assistant', content: [{ type: 'tool-call', id: `c${i}`, name: 'bash', arguments: '{"command":"true"}' }] }))
      history.push(freezeDeep({ role: 'tool', callId: `c${i}`, name: 'bash', content: [{ type: 'text', text: 'ok' }], isError: false }))
      same(req())
    }
  })

  it('an unfrozen message is never served from the cache: a change to it shows in the next body', () => {
    const m: ModelMessage = { role: 'user', content: [{ type: 'text', text: 'before' }] }
    const req: GenerateRequest = { config: { provider: 'deepseek', model: 'm' }, system: '', tools: [], messages: [m], signal }
    const first = serializeChatRequest(req)
    ;(m.content[0] as { text: string }).text = 'after'
    const second = serializeChatRequest(req)
    expect(first).toContain('"before"')
    expect(second).toContain('"after"')
    same(req)
  })
})

describe('encodeChatRequest (the request body as bytes from a per-conversation arena)', () => {
  it('concatenated, is the UTF-8 of JSON.stringify(buildChatRequest(req)) for any request, frozen or not, encoded twice', () => {
    fc.assert(fc.property(config, text, tools, fc.array(message, { maxLength: 6 }), fc.boolean(), (cfg, system, tl, messages, frozen) => {
      const history = frozen ? messages.map(freezeDeep) : messages
      const req: GenerateRequest = { config: cfg as GenerateRequest['config'], system, tools: tl as GenerateRequest['tools'], messages: history, signal }
      sameBytes(req)
      sameBytes(req)
    }), { numRuns: 300 })
  })

  it('any sequence of appends, truncations, divergent histories sharing a first message, system prompt changes and unfrozen tails matches, and bytes handed out are never changed afterwards', () => {
    const base = fc.array(message, { minLength: 1, maxLength: 40 }).map((ms) => ms.map(freezeDeep))
    const op = fc.oneof(
      fc.record({ kind: fc.constant('append' as const), n: fc.integer({ min: 1, max: 30 }) }),
      fc.record({ kind: fc.constant('cut' as const), keep: fc.integer({ min: 1, max: 60 }) }),
      fc.record({ kind: fc.constant('system' as const), system: text }),
      fc.record({ kind: fc.constant('unfrozen' as const), m: message }),
    )
    fc.assert(fc.property(base, text, fc.array(op, { minLength: 1, maxLength: 12 }), (pool, system0, ops) => {
      const first = pool[0]!
      let history: ModelMessage[] = [first]
      let system = system0
      const sent: { chunk: Uint8Array; copy: Buffer }[] = []
      for (const o of ops) {
        if (o.kind === 'append') for (let i = 0; i < o.n; i++) history.push(pool[(history.length + i) % pool.length]!)
        else if (o.kind === 'cut') history = history.slice(0, Math.max(1, Math.min(o.keep, history.length)))
        else if (o.kind === 'system') system = o.system
        else history = [...history, o.m]
        const chunks = sameBytes({ config: { provider: 'deepseek', model: 'm' }, system, tools: [], messages: history.slice(), signal })
        for (const chunk of chunks) sent.push({ chunk, copy: Buffer.from(chunk) })
        // an unfrozen message stays out of the arena: drop it before the next round
        history = history.filter((m) => Object.isFrozen(m))
      }
      for (const { chunk, copy } of sent) expect(Buffer.from(chunk).equals(copy)).toBe(true)
    }), { numRuns: 200 })
  })

  it('a 2,000-message history grows its arena past the first buffer and each step sends the history prefix as one shared chunk', () => {
    const history: ModelMessage[] = []
    const req = (): GenerateRequest => ({ config: { provider: 'deepseek', model: 'm' }, system: 'sys', tools: [], messages: history.slice(), signal })
    let previous: Uint8Array | undefined
    for (let i = 0; i < 1000; i++) {
      history.push(freezeDeep({ role: 'assistant', content: [{ type: 'tool-call', id: `c${i}`, name: 'bash', arguments: `{"command":"echo ${'é'.repeat(i % 7)}"}` }] }))
      history.push(freezeDeep({ role: 'tool', callId: `c${i}`, name: 'bash', content: [{ type: 'text', text: `ok ${i}` }], isError: false }))
      const chunks = sameBytes(req())
      expect(chunks).toHaveLength(2)
      // the prefix chunk only grows: the previous step's bytes are its start
      if (previous) expect(Buffer.from(chunks[0]!.subarray(0, previous.byteLength)).equals(Buffer.from(previous))).toBe(true)
      previous = chunks[0]
    }
    expect(previous!.byteLength).toBeGreaterThan(16_384)
  })
})
