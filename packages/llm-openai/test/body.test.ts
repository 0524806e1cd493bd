import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { GenerateRequest, ModelMessage } from '@dsh/protocol'
import { buildChatRequest, encodeChatRequest, serializeChatRequest } from '@dsh/llm-openai'
import { applyOps, freezeDeep, historyOp, modelConfig, modelMessage, text, toolSpecs } from '@dsh/testkit/arbitraries'

const signal = new AbortController().signal
const same = (req: GenerateRequest) => expect(serializeChatRequest(req)).toBe(JSON.stringify(buildChatRequest(req)))
const sameBytes = (req: GenerateRequest): Uint8Array[] => {
  const chunks = encodeChatRequest(req)
  expect(Buffer.concat(chunks).toString('utf8')).toBe(JSON.stringify(buildChatRequest(req)))
  return chunks
}

describe('serializeChatRequest (the cached request body)', () => {
  it('is byte-identical to JSON.stringify(buildChatRequest(req)) for any request, frozen or not, on a cache hit too', () => {
    fc.assert(fc.property(modelConfig('deepseek'), text, toolSpecs, fc.array(modelMessage, { maxLength: 6 }), fc.boolean(), (cfg, system, tl, messages, frozen) => {
      const history = frozen ? messages.map(freezeDeep) : messages
      const req: GenerateRequest = { config: cfg, system, tools: tl, messages: history, signal }
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
    fc.assert(fc.property(modelConfig('deepseek'), text, toolSpecs, fc.array(modelMessage, { maxLength: 6 }), fc.boolean(), (cfg, system, tl, messages, frozen) => {
      const history = frozen ? messages.map(freezeDeep) : messages
      const req: GenerateRequest = { config: cfg, system, tools: tl, messages: history, signal }
      sameBytes(req)
      sameBytes(req)
    }), { numRuns: 300 })
  })

  it('any sequence of appends, truncations, divergent histories sharing a first message, system prompt changes and unfrozen tails matches, and bytes handed out are never changed afterwards', () => {
    const base = fc.array(modelMessage, { minLength: 1, maxLength: 40 }).map((ms) => ms.map(freezeDeep))
    fc.assert(fc.property(base, text, fc.array(historyOp, { minLength: 1, maxLength: 12 }), (pool, system0, ops) => {
      const sent: { chunk: Uint8Array; copy: Buffer }[] = []
      applyOps(pool, system0, ops, (messages, system) => {
        const chunks = sameBytes({ config: { provider: 'deepseek', model: 'm' }, system, tools: [], messages, signal })
        for (const chunk of chunks) sent.push({ chunk, copy: Buffer.from(chunk) })
      })
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
