import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { GenerateRequest, ModelMessage } from '@dsh/protocol'
import { buildMessagesRequest, encodeMessagesRequest, serializeMessagesRequest } from '@dsh/llm-anthropic'
import { applyOps, freezeDeep, historyOp, modelConfig, modelMessage, text, toolSpecs } from '@dsh/testkit/arbitraries'

const signal = new AbortController().signal
const uncached = (req: GenerateRequest): string => JSON.stringify(buildMessagesRequest(req))
/** Both builds (the joined text and the arena's bytes) against the uncached one. */
const same = (req: GenerateRequest): Uint8Array[] => {
  const want = uncached(req)
  expect(serializeMessagesRequest(req)).toBe(want)
  const chunks = encodeMessagesRequest(req)
  expect(Buffer.concat(chunks).toString('utf8')).toBe(want)
  return chunks
}

describe('serializeMessagesRequest (the cached request body)', () => {
  it('is byte-identical to JSON.stringify(buildMessagesRequest(req)) for any request, frozen or not, on a cache hit too', () => {
    fc.assert(fc.property(modelConfig('anthropic'), text, toolSpecs, fc.array(modelMessage, { maxLength: 8 }), fc.boolean(), (cfg, system, tl, messages, frozen) => {
      const history = frozen ? messages.map(freezeDeep) : messages
      const req: GenerateRequest = { config: cfg, system, tools: tl, messages: history, signal }
      same(req)
      same(req) // the second call reads the cache
    }), { numRuns: 400 })
  })

  it('a history growing one random message per step (the breakpoints move each step) matches after every append', () => {
    fc.assert(fc.property(fc.array(modelMessage, { minLength: 1, maxLength: 30 }), text, (messages, system) => {
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
      const body = Buffer.concat(same(req())).toString('utf8')
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

describe('encodeMessagesRequest (the request body as bytes from a per-conversation arena)', () => {
  const req = (messages: ModelMessage[], system = 'sys'): GenerateRequest => ({ config: { provider: 'anthropic', model: 'm' }, system, tools: [], messages, signal })
  const u = (t: string): ModelMessage => freezeDeep({ role: 'user', content: [{ type: 'text', text: t }] })
  const a = (id: string): ModelMessage => freezeDeep({ role: 'assistant', content: [{ type: 'tool-call', id, name: 'bash', arguments: '{"command":"true"}' }] })
  const t = (id: string): ModelMessage => freezeDeep({ role: 'tool', callId: id, name: 'bash', content: [{ type: 'text', text: `ok ${id} é` }], isError: false })

  it('any sequence of appends, truncations, divergent histories sharing a first message, system prompt changes and unfrozen tails matches, and bytes handed out are never changed afterwards', () => {
    const base = fc.array(modelMessage, { minLength: 1, maxLength: 40 }).map((ms) => ms.map(freezeDeep))
    fc.assert(fc.property(base, text, fc.array(historyOp, { minLength: 1, maxLength: 12 }), toolSpecs, (pool, system0, ops, tl) => {
      const sent: { chunk: Uint8Array; copy: Buffer }[] = []
      applyOps(pool, system0, ops, (messages, system) => {
        for (const chunk of same({ ...req(messages, system), tools: tl })) sent.push({ chunk, copy: Buffer.from(chunk) })
      })
      for (const { chunk, copy } of sent) expect(Buffer.from(chunk).equals(copy)).toBe(true)
    }), { numRuns: 300 })
  })

  it('in a 1,000-step tool loop the moving breakpoints re-encode nothing before them: the prefix chunk only grows and the rest stays a few body messages', () => {
    const history: ModelMessage[] = [u('go')]
    let previous: Uint8Array | undefined
    let largestRest = 0
    for (let i = 0; i < 1000; i++) {
      history.push(a(`c${i}`), t(`c${i}`))
      if (i % 5 === 0) history.push(t(`d${i}`)) // a run of two results: one body message
      const chunks = same(req(history.slice()))
      expect(chunks).toHaveLength(2)
      if (previous) expect(Buffer.from(chunks[0]!.subarray(0, previous.byteLength)).equals(Buffer.from(previous))).toBe(true)
      previous = chunks[0]
      largestRest = Math.max(largestRest, chunks[1]!.byteLength)
    }
    expect(previous!.byteLength).toBeGreaterThan(100_000)
    // the last two tool-result turns, the assistant turn between them, and `],"stream":true,"system":…}`
    expect(largestRest).toBeLessThan(800)
  })

  it('a tool-result run the arena holds as closed is reopened when the history diverges right after it (no stale split run)', () => {
    const [u0, a0, t0, u1, a1, t1, u2] = [u('q0'), a('c0'), t('c0'), u('q1'), a('c1'), t('c1'), u('q2')]
    same(req([u0!, a0!, t0!, u1!, a1!, t1!, u2!])) // the arena takes u0, a0, [t0] (closed by u1), u1, a1
    // t0 and extra are now one body message, before both breakpoints
    const chunks = same(req([u0!, a0!, t0!, t('c0b'), u1!, a('c2'), u('q3'), a('c3'), u('q4')]))
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: { content: unknown[] }[] }
    expect(body.messages[2]!.content).toHaveLength(2)
  })

  it('a history cut back so that a message the arena holds is again among the last two user messages is sent marked', () => {
    const [u0, a0, u1, a1, u2, a2, u3] = [u('q0'), a('c0'), u('q1'), a('c1'), u('q2'), a('c2'), u('q3')]
    same(req([u0!, a0!, u1!, a1!, u2!, a2!, u3!])) // the arena takes u0 … a1
    const body = JSON.parse(Buffer.concat(same(req([u0!, a0!, u1!]))).toString('utf8')) as { messages: { content: { cache_control?: unknown }[] }[] }
    expect(body.messages.map((m) => m.content.at(-1)?.cache_control !== undefined)).toEqual([true, false, true])
  })

  it('an unfrozen message in the middle of the history stops the arena there and is re-read on every request', () => {
    const loose: ModelMessage = { role: 'assistant', content: [{ type: 'text', text: 'before' }] }
    const history = [u('q0'), loose, u('q1'), a('c1'), t('c1'), u('q2'), a('c2'), t('c2')]
    const first = Buffer.concat(same(req(history))).toString('utf8')
    ;(loose.content[0] as { text: string }).text = 'after'
    const second = Buffer.concat(same(req(history))).toString('utf8')
    expect(first).toContain('"before"')
    expect(second).toContain('"after"')
  })
})
