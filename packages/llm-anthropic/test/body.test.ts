import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { GenerateRequest, ModelMessage } from '@dsh/protocol'
import { buildMessagesRequest, serializeMessagesRequest } from '@dsh/llm-anthropic'

const text = fc.string({ unit: 'binary', maxLength: 40 })
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
// runs of tool results are likely: they merge into one user message
const message: fc.Arbitrary<ModelMessage> = fc.oneof({ arbitrary: user, weight: 2 }, { arbitrary: assistant, weight: 2 }, { arbitrary: tool, weight: 3 })
const config = fc.record({
  provider: fc.constant('anthropic'), model: text,
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
const uncached = (req: GenerateRequest): string => JSON.stringify(buildMessagesRequest(req))
const same = (req: GenerateRequest): void => expect(serializeMessagesRequest(req)).toBe(uncached(req))

describe('serializeMessagesRequest (the cached request body)', () => {
  it('is byte-identical to JSON.stringify(buildMessagesRequest(req)) for any request, frozen or not, on a cache hit too', () => {
    fc.assert(fc.property(config, text, tools, fc.array(message, { maxLength: 8 }), fc.boolean(), (cfg, system, tl, messages, frozen) => {
      const history = frozen ? messages.map(freezeDeep) : messages
      const req: GenerateRequest = { config: cfg as GenerateRequest['config'], system, tools: tl as GenerateRequest['tools'], messages: history, signal }
      same(req)
      same(req) // the second call reads the cache
    }), { numRuns: 400 })
  })

  it('a history growing one random message per step (the breakpoints move each step) matches after every append', () => {
    fc.assert(fc.property(fc.array(message, { minLength: 1, maxLength: 30 }), text, (messages, system) => {
      const history: ModelMessage[] = []
      for (const m of messages) {
        history.push(freezeDeep(m))
        same({ config: { provider: 'anthropic', model: 'm' }, system, tools: [], messages: history.slice(), signal })
      }
    }), { numRuns: 150 })
  })

  it('in a tool loop the breakpoint leaves a message once it is no longer among the last two user messages', () => {
    const history: ModelMessage[] = [freezeDeep({ role: 'user', content: [{ type: 'text', text: 'go \u2028 "quoted" \\' }] })]
    const req = (): GenerateRequest => ({ config: { provider: 'anthropic', model: 'm', maxTokens: 10 }, system: 'sys', tools: [], messages: history.slice(), signal })
    const marks: number[][] = []
    for (let i = 0; i < 40; i++) {
      history.push(freezeDeep({ role: 'assistant', content: [{ type: 'reasoning', text: 'r', signature: `s${i}` }, { type: 'tool-call', id: `c${i}`, name: 'bash', arguments: '{"command":"true"}' }] }))
      history.push(freezeDeep({ role: 'tool', callId: `c${i}`, name: 'bash', content: [{ type: 'text', text: `ok ${'é'.repeat(i)}` }], isError: false }))
      if (i % 3 === 0) history.push(freezeDeep({ role: 'tool', callId: `d${i}`, name: 'bash', content: [], isError: true }))
      const body = serializeMessagesRequest(req())
      expect(body).toBe(uncached(req()))
      const parsed = JSON.parse(body) as { messages: { content: { cache_control?: unknown }[] }[] }
      marks.push(parsed.messages.flatMap((m, at) => m.content.some((b) => b.cache_control !== undefined) ? [at] : []))
    }
    // body messages: user, then (assistant, tool-result user) per step; the last two users are marked
    expect(marks.slice(0, 3)).toEqual([[0, 2], [2, 4], [4, 6]])
    expect(marks[39]).toEqual([78, 80])
  })

  it('an unfrozen message is never served from the cache: a change to it shows in the next body', () => {
    const m: ModelMessage = { role: 'assistant', content: [{ type: 'text', text: 'before' }] }
    const req: GenerateRequest = { config: { provider: 'anthropic', model: 'm' }, system: '', tools: [], messages: [m, freezeDeep({ role: 'user', content: [{ type: 'text', text: 'x' }] })], signal }
    const first = serializeMessagesRequest(req)
    ;(m.content[0] as { text: string }).text = 'after'
    const second = serializeMessagesRequest(req)
    expect(first).toContain('"before"')
    expect(second).toContain('"after"')
    same(req)
  })

  it('a frozen message that was marked and then is not is sent without its breakpoint (no stale marked text)', () => {
    const question = freezeDeep<ModelMessage>({ role: 'user', content: [{ type: 'text', text: 'q' }] })
    const base = { config: { provider: 'anthropic', model: 'm' }, system: '', tools: [], signal }
    // marked while among the last two user messages; then the same object again, unmarked
    same({ ...base, messages: [question] })
    const later: ModelMessage[] = [question]
    for (let i = 0; i < 3; i++) later.push(freezeDeep({ role: 'assistant', content: [{ type: 'text', text: `a${i}` }] }), freezeDeep({ role: 'user', content: [{ type: 'text', text: `u${i}` }] }))
    const body = JSON.parse(serializeMessagesRequest({ ...base, messages: later })) as { messages: unknown[] }
    expect(body.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'q' }] })
    same({ ...base, messages: later })
    same({ ...base, messages: [question] }) // and marked again when it is last
  })
})
