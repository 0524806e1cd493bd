import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { GenerateRequest, ModelMessage } from '@dsh/protocol'
import { buildChatRequest, serializeChatRequest } from '@dsh/llm-openai'

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
