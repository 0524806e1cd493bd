import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { GenerateRequest, LlmFailure, ProviderEndpoint, StreamChunk } from '@dsh/protocol'
import { startMockModel, type MockModel, type Script } from '@dsh/testkit'
import { anthropicAdapter, buildMessagesRequest } from '@dsh/llm-anthropic'

const KEY = 'sk-ant-test-secret-5678'
let mock: MockModel
let endpoint: ProviderEndpoint

beforeAll(async () => {
  mock = await startMockModel()
  endpoint = { id: 'anthropic', protocol: 'anthropic', baseUrl: mock.url, apiKey: KEY }
})
beforeEach(async () => {
  await fetch(`${mock.url}/__mock/reset`, { method: 'POST' })
})
afterAll(async () => {
  await mock.close()
})

function request(signal = new AbortController().signal): GenerateRequest {
  return {
    config: { provider: 'anthropic', model: 'claude-test', reasoningEffort: 'low' },
    system: 'sys',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
    tools: [{ name: 'bash', description: 'run', parameters: { type: 'object' } }],
    signal,
  }
}

async function run(script: Script, opts: { endpoint?: Partial<ProviderEndpoint>; signal?: AbortSignal; onChunk?: (c: StreamChunk) => void } = {}): Promise<StreamChunk[]> {
  mock.setScript(script)
  const chunks: StreamChunk[] = []
  for await (const chunk of anthropicAdapter.stream(request(opts.signal), { ...endpoint, ...opts.endpoint })) {
    chunks.push(chunk)
    opts.onChunk?.(chunk)
  }
  return chunks
}

function failureOf(chunks: StreamChunk[]): LlmFailure | undefined {
  const last = chunks.at(-1)
  return last?.type === 'finish' ? last.error : undefined
}

describe('anthropicAdapter against the mock model', () => {
  it('streams thinking (with signature), text and a tool call, usage, finish (whole sequence)', async () => {
    const chunks = await run([{
      reasoning: 'think hard', text: 'On it', chunkSize: 5,
      toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }],
      usage: { input: 100, output: 20, cacheRead: 40 },
    }])
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, block: { kind: 'reasoning' } },
      { type: 'reasoning-delta', index: 0, text: 'think' },
      { type: 'reasoning-delta', index: 0, text: ' hard' },
      { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'think hard', signature: 'mock-signature-msg_mock_1' } },
      { type: 'block-start', index: 1, block: { kind: 'text' } },
      { type: 'text-delta', index: 1, text: 'On it' },
      { type: 'block-end', index: 1, block: { type: 'text', text: 'On it' } },
      { type: 'block-start', index: 2, block: { kind: 'tool-call', id: 'call_1', name: 'bash' } },
      { type: 'tool-call-delta', index: 2, json: '{"com' },
      { type: 'tool-call-delta', index: 2, json: 'mand"' },
      { type: 'tool-call-delta', index: 2, json: ':"ls"' },
      { type: 'tool-call-delta', index: 2, json: '}' },
      { type: 'block-end', index: 2, block: { type: 'tool-call', id: 'call_1', name: 'bash', arguments: '{"command":"ls"}' } },
      { type: 'usage', usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 40, cacheWriteTokens: 0 } },
      { type: 'finish', reason: 'tool-calls' },
    ])
    const sent = mock.requests[0]!
    expect([sent.path, sent.headers['x-api-key'], sent.headers['anthropic-version']]).toEqual(['/v1/messages', '<redacted>', '2023-06-01'])
    expect(sent.body).toEqual(buildMessagesRequest(request()))
  })

  it('keeps parallel tool calls raw; a call without input gets {}', async () => {
    const raw = '{"path": "a b.txt",  "limit": 3}'
    const chunks = await run([{ toolCalls: [{ id: 'toolu_a', name: 'read', arguments: raw }, { name: 'todo_read', arguments: '' }], chunkSize: 4 }])
    expect(chunks.filter((c) => c.type === 'block-end').map((c) => c.block)).toEqual([
      { type: 'tool-call', id: 'toolu_a', name: 'read', arguments: raw },
      { type: 'tool-call', id: 'call_1', name: 'todo_read', arguments: '{}' },
    ])
    expect(chunks.filter((c) => c.type === 'tool-call-delta' && c.index === 0).map((c) => c.type === 'tool-call-delta' ? c.json : '').join('')).toBe(raw)
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'tool-calls' })
  })

  it('maps end_turn to stop and max_tokens to max-tokens', async () => {
    expect((await run([{ text: 'fine' }])).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect((await run([{ text: 'trunc', finish: 'max-tokens' }])).at(-1)).toEqual({ type: 'finish', reason: 'max-tokens' })
  })

  it('maps HTTP errors to stable codes', async () => {
    expect(failureOf(await run([{ error: { status: 429, message: 'rate limited', retryAfter: 2 } }]))).toEqual({
      code: 'RATE_LIMIT', message: 'provider "anthropic" is rate limiting (HTTP 429): rate limited', retryable: true, provider: 'anthropic', status: 429, retryAfterMs: 2000,
    })
    expect(failureOf(await run([{ error: { status: 529, message: 'Overloaded' } }]))).toMatchObject({ code: 'SERVER', retryable: true, status: 529 })
    expect(failureOf(await run([{ error: { status: 400, message: 'prompt is too long: 210000 tokens > 200000 maximum' } }])))
      .toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', retryable: false })
    expect(failureOf(await run([{ error: { status: 400, message: 'messages: roles must alternate' } }]))).toMatchObject({ code: 'BAD_REQUEST', retryable: false })
  })

  it('reports 401 as AUTH naming the provider and never the key', async () => {
    const chunks = await run([{ error: { status: 401, message: `invalid x-api-key ${KEY}` } }])
    expect(chunks).toEqual([{ type: 'finish', reason: 'error', error: {
      code: 'AUTH', message: 'provider "anthropic" rejected the credentials (HTTP 401): invalid x-api-key <redacted>', retryable: false, provider: 'anthropic', status: 401,
    } }])
  })

  it('maps an overloaded_error event mid-stream to a retryable SERVER failure', async () => {
    const chunks = await run([{ error: { status: 529, message: 'Overloaded', inStream: true }, }])
    expect(chunks.map((c) => c.type)).toEqual(['usage', 'finish'])
    expect(failureOf(chunks)).toEqual({
      code: 'SERVER', message: 'provider "anthropic" reported overloaded_error mid-stream: Overloaded', retryable: true, provider: 'anthropic',
    })
  })

  it('maps stream faults: cut → TRANSPORT, malformed → MALFORMED_RESPONSE, empty → EMPTY_RESPONSE', async () => {
    const cut = await run([{ fault: 'cut', text: 'half' }])
    expect(cut.filter((c) => c.type === 'block-end')).toEqual([{ type: 'block-end', index: 0, block: { type: 'text', text: 'half' } }])
    expect(failureOf(cut)).toMatchObject({ code: 'TRANSPORT', retryable: true, provider: 'anthropic' })
    expect(failureOf(await run([{ fault: 'malformed' }]))).toMatchObject({ code: 'MALFORMED_RESPONSE', provider: 'anthropic' })
    expect(failureOf(await run([{ fault: 'empty' }]))).toMatchObject({ code: 'EMPTY_RESPONSE', retryable: true })
  })

  it('honours abort mid-stream: closes the open block and finishes aborted', async () => {
    const controller = new AbortController()
    const chunks = await run([{ fault: 'stall', text: 'hmm' }], {
      signal: controller.signal,
      onChunk: (c) => { if (c.type === 'text-delta') controller.abort() },
    })
    // The mock estimates input tokens as ceil(body chars / 4) and reports 1 output token at message_start.
    const estimatedInput = Math.ceil(JSON.stringify(mock.requests[0]!.body).length / 4)
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, block: { kind: 'text' } },
      { type: 'text-delta', index: 0, text: 'hmm' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'hmm' } },
      { type: 'usage', usage: { inputTokens: estimatedInput, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 } },
      { type: 'finish', reason: 'aborted' },
    ])
  })

  it('fails with TIMEOUT when the stream goes idle', async () => {
    const chunks = await run([{ fault: 'stall' }], { endpoint: { idleTimeoutMs: 200 } })
    expect(failureOf(chunks)).toMatchObject({ code: 'TIMEOUT', message: 'provider "anthropic" sent nothing for 200 ms', retryable: true })
  })
})
