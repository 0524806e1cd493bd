import { createServer } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { GenerateRequest, LlmFailure, ProviderEndpoint, StreamChunk } from '@dsh/protocol'
import { startMockModel, type MockModel, type Script } from '@dsh/testkit'
import { buildChatRequest, mapChatUsage, openaiAdapter } from '@dsh/llm-openai'

const KEY = 'sk-test-secret-key-1234'
let mock: MockModel
let endpoint: ProviderEndpoint

beforeAll(async () => {
  mock = await startMockModel()
  endpoint = { id: 'deepseek', protocol: 'openai', baseUrl: `${mock.url}/`, apiKey: KEY }
})
beforeEach(async () => {
  await fetch(`${mock.url}/__mock/reset`, { method: 'POST' })
})
afterAll(async () => {
  await mock.close()
})

function request(signal = new AbortController().signal): GenerateRequest {
  return {
    config: { provider: 'deepseek', model: 'deepseek-chat' },
    system: 'sys',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
    tools: [{ name: 'bash', description: 'run', parameters: { type: 'object' } }],
    signal,
  }
}

async function run(script: Script, opts: { endpoint?: Partial<ProviderEndpoint>; signal?: AbortSignal; onChunk?: (c: StreamChunk) => void } = {}): Promise<StreamChunk[]> {
  mock.setScript(script)
  const chunks: StreamChunk[] = []
  for await (const chunk of openaiAdapter.stream(request(opts.signal), { ...endpoint, ...opts.endpoint })) {
    chunks.push(chunk)
    opts.onChunk?.(chunk)
  }
  return chunks
}

function failureOf(chunks: StreamChunk[]): LlmFailure | undefined {
  const last = chunks.at(-1)
  return last?.type === 'finish' ? last.error : undefined
}

describe('openaiAdapter against the mock model', () => {
  it('streams reasoning then text, usage with cache hits, then finish (whole sequence)', async () => {
    const chunks = await run([{ reasoning: 'think hard', text: 'Hello world', chunkSize: 5, usage: { input: 100, output: 20, cacheRead: 40 } }])
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, block: { kind: 'reasoning' } },
      { type: 'reasoning-delta', index: 0, text: 'think' },
      { type: 'reasoning-delta', index: 0, text: ' hard' },
      { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'think hard' } },
      { type: 'block-start', index: 1, block: { kind: 'text' } },
      { type: 'text-delta', index: 1, text: 'Hello' },
      { type: 'text-delta', index: 1, text: ' worl' },
      { type: 'text-delta', index: 1, text: 'd' },
      { type: 'block-end', index: 1, block: { type: 'text', text: 'Hello world' } },
      { type: 'usage', usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 40, reasoningTokens: 3 } },
      { type: 'finish', reason: 'stop' },
    ])
    const sent = mock.requests.at(-1)!
    expect(sent.path).toBe('/chat/completions')
    expect(sent.headers.authorization).toBe('<redacted>')
    expect(sent.body).toEqual(buildChatRequest(request()))
  })

  it('keeps parallel tool-call arguments raw and intact', async () => {
    const args2 = '{"path": "dir/a b.txt",  "limit": 10}'
    const chunks = await run([{ text: 'Checking.', toolCalls: [{ name: 'bash', arguments: { command: 'ls -la "x y"' } }, { id: 'call_custom', name: 'read', arguments: args2 }], chunkSize: 3 }])
    const ends = chunks.filter((c) => c.type === 'block-end').map((c) => c.block)
    expect(ends).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool-call', id: 'call_1', name: 'bash', arguments: JSON.stringify({ command: 'ls -la "x y"' }) },
      { type: 'tool-call', id: 'call_custom', name: 'read', arguments: args2 },
    ])
    for (const index of [1, 2]) {
      const json = chunks.filter((c) => c.type === 'tool-call-delta' && c.index === index).map((c) => c.type === 'tool-call-delta' ? c.json : '').join('')
      expect(json).toBe((ends[index] as { arguments: string }).arguments)
    }
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'tool-calls' })
    expect(chunks.findIndex((c) => c.type === 'usage')).toBe(chunks.length - 2)
  })

  it('maps length to max-tokens', async () => {
    const chunks = await run([{ text: 'cut sho', finish: 'max-tokens' }])
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'max-tokens' })
  })

  it('maps HTTP errors to stable codes', async () => {
    expect(failureOf(await run([{ error: { status: 429, message: 'slow down', retryAfter: 7 } }]))).toEqual({
      code: 'RATE_LIMIT', message: 'provider "deepseek" is rate limiting (HTTP 429): slow down', retryable: true, provider: 'deepseek', status: 429, retryAfterMs: 7000,
    })
    expect(failureOf(await run([{ error: { status: 503 } }]))).toMatchObject({ code: 'SERVER', retryable: true, status: 503 })
    expect(failureOf(await run([{ error: { status: 400, message: "This model's maximum context length is 65536 tokens." } }])))
      .toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', retryable: false, status: 400 })
    expect(failureOf(await run([{ error: { status: 422, message: 'bad tool schema' } }]))).toMatchObject({ code: 'BAD_REQUEST', retryable: false, status: 422 })
  })

  it('reports 401 as AUTH naming the provider and never the key', async () => {
    const chunks = await run([{ error: { status: 401, message: `Incorrect API key provided: ${KEY}` } }])
    expect(chunks).toEqual([{ type: 'finish', reason: 'error', error: {
      code: 'AUTH', message: 'provider "deepseek" rejected the credentials (HTTP 401): Incorrect API key provided: <redacted>', retryable: false, provider: 'deepseek', status: 401,
    } }])
    expect(JSON.stringify(chunks)).not.toContain(KEY)
  })

  it('maps stream faults: cut → TRANSPORT, malformed → MALFORMED_RESPONSE, empty → EMPTY_RESPONSE, in-stream error → SERVER', async () => {
    const cut = await run([{ fault: 'cut', text: 'half an ans' }])
    expect(cut.slice(0, -1)).toEqual([
      { type: 'block-start', index: 0, block: { kind: 'text' } },
      { type: 'text-delta', index: 0, text: 'half an ans' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'half an ans' } },
    ])
    expect(failureOf(cut)).toMatchObject({ code: 'TRANSPORT', retryable: true, provider: 'deepseek' })
    expect(failureOf(await run([{ fault: 'malformed' }]))).toMatchObject({ code: 'MALFORMED_RESPONSE', provider: 'deepseek' })
    const empty = await run([{ fault: 'empty', }])
    expect(empty.map((c) => c.type)).toEqual(['usage', 'finish'])
    expect(failureOf(empty)).toMatchObject({ code: 'EMPTY_RESPONSE', retryable: true })
    expect(failureOf(await run([{ error: { status: 500, message: 'boom', inStream: true } }]))).toMatchObject({ code: 'SERVER', retryable: true })
  })

  it('reports an exhausted mock script as a server error', async () => {
    const chunks = await run([])
    expect(failureOf(chunks)).toMatchObject({ code: 'SERVER', status: 500 })
    expect(failureOf(chunks)?.message).toContain('mock script exhausted after 0 requests')
  })

  it('reports a refused connection as TRANSPORT', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const p = (server.address() as { port: number }).port
        server.close(() => resolve(p))
      })
    })
    const chunks = await run([], { endpoint: { baseUrl: `http://127.0.0.1:${port}` } })
    expect(failureOf(chunks)).toMatchObject({ code: 'TRANSPORT', retryable: true, provider: 'deepseek' })
    expect(failureOf(chunks)?.message).toContain('ECONNREFUSED')
  })

  it('honours abort mid-stream: closes the open block and finishes aborted', async () => {
    const controller = new AbortController()
    const chunks = await run([{ fault: 'stall', text: 'thinking out loud' }], {
      signal: controller.signal,
      onChunk: (c) => { if (c.type === 'text-delta') controller.abort() },
    })
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, block: { kind: 'text' } },
      { type: 'text-delta', index: 0, text: 'thinking out loud' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'thinking out loud' } },
      { type: 'finish', reason: 'aborted' },
    ])
  })

  it('finishes aborted without a request when the signal already fired', async () => {
    const before = mock.requests.length
    const controller = new AbortController()
    controller.abort()
    expect(await run([{ text: 'x' }], { signal: controller.signal })).toEqual([{ type: 'finish', reason: 'aborted' }])
    expect(mock.requests.length).toBe(before)
  })

  it('fails with TIMEOUT when the stream goes idle', async () => {
    const chunks = await run([{ fault: 'stall' }], { endpoint: { idleTimeoutMs: 200 } })
    expect(failureOf(chunks)).toEqual({ code: 'TIMEOUT', message: 'provider "deepseek" sent nothing for 200 ms', retryable: true, provider: 'deepseek' })
  })
})

describe('mapChatUsage', () => {
  it('reads OpenAI cached_tokens when DeepSeek fields are absent', () => {
    expect(mapChatUsage({ prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 1 } }))
      .toEqual({ inputTokens: 10, outputTokens: 2, cacheReadTokens: 4, reasoningTokens: 1 })
    expect(mapChatUsage({ prompt_tokens: 10, completion_tokens: 2 })).toEqual({ inputTokens: 10, outputTokens: 2 })
  })
})
