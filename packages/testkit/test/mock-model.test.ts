import { mkdtemp, writeFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadScript, parseScript, startMockModel, type MockModel } from '@dsh/testkit'

let mock: MockModel

beforeEach(async () => {
  mock = await startMockModel()
})
afterEach(async () => {
  await mock.close()
})

const chatBody = (text: string, stream = true) => ({
  model: 'deepseek-chat',
  messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: text }],
  tools: [{ type: 'function', function: { name: 'bash', description: 'run', parameters: {} } }],
  stream,
  stream_options: { include_usage: true },
})

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${mock.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
}

/** The `data:` payloads of an SSE body, with their event names. */
function sse(text: string): { event: string | undefined; data: string }[] {
  return text.split('\n\n').filter((f) => f.trim() !== '').map((frame) => {
    const lines = frame.split('\n')
    const event = lines.find((l) => l.startsWith('event: '))?.slice(7)
    return { event, data: lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n') }
  })
}

describe('script playback', () => {
  it('answers in script order, records every request and fails loudly when exhausted', async () => {
    mock.setScript([{ text: 'first' }, { text: 'second' }])
    const a = await post('/chat/completions', chatBody('one', false), { authorization: 'Bearer sk-secret' })
    const b = await post('/v1/messages', { model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: 'two' }] }, { 'x-api-key': 'sk-ant' })
    const c = await post('/v1/chat/completions', chatBody('three', false))
    expect((await a.json() as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe('first')
    expect((await b.json() as { content: unknown[] }).content).toEqual([{ type: 'text', text: 'second' }])
    expect(c.status).toBe(500)
    expect(await c.json()).toEqual({
      error: { message: 'mock script exhausted after 2 requests (request #3: openai /v1/chat/completions)', type: 'server_error', param: null, code: '500' },
    })
    expect(mock.failures).toEqual(['mock script exhausted after 2 requests (request #3: openai /v1/chat/completions)'])
    expect(mock.requests.map((r) => [r.protocol, r.path, r.headers.authorization, r.headers['x-api-key']])).toEqual([
      ['openai', '/chat/completions', '<redacted>', undefined],
      ['anthropic', '/v1/messages', undefined, '<redacted>'],
      ['openai', '/v1/chat/completions', undefined, undefined],
    ])
    expect(mock.requests[0]!.body).toEqual(chatBody('one', false))
    expect(JSON.stringify(mock.requests)).not.toContain('sk-')
  })

  it('streams OpenAI chunks like the real API, ending with [DONE]', async () => {
    mock.setScript([{ reasoning: 'hmm', text: 'Hi there', chunkSize: 4, toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }], usage: { input: 50, output: 9, cacheRead: 20 } }])
    const res = await post('/chat/completions', chatBody('hello'))
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    const frames = sse(await res.text())
    expect(frames.at(-1)).toEqual({ event: undefined, data: '[DONE]' })
    const parsed = frames.slice(0, -1).map((f) => JSON.parse(f.data) as { choices: { delta: unknown; finish_reason: string | null }[]; usage?: unknown })
    expect(parsed.map((p) => p.choices[0] ? [p.choices[0].delta, p.choices[0].finish_reason] : ['usage', p.usage])).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{ content: null, reasoning_content: 'hmm' }, null],
      [{ content: 'Hi t' }, null],
      [{ content: 'here' }, null],
      [{ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'bash', arguments: '' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '{"co' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: 'mman' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: 'd":"' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: 'ls"}' } }] }, null],
      [{}, 'tool_calls'],
      ['usage', {
        prompt_tokens: 50, completion_tokens: 9, total_tokens: 59, prompt_cache_hit_tokens: 20, prompt_cache_miss_tokens: 30,
        prompt_tokens_details: { cached_tokens: 20 }, completion_tokens_details: { reasoning_tokens: 1 },
      }],
    ])
  })

  it('streams Anthropic events with the real event names', async () => {
    mock.setScript([{ reasoning: 'hmm', text: 'Hi', toolCalls: [{ id: 'toolu_1', name: 'read', arguments: '{"path":"a"}' }], usage: { input: 30, output: 7, cacheRead: 10 } }])
    const res = await post('/messages', { model: 'claude', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'x' }] })
    const frames = sse(await res.text())
    expect(frames.every((f) => f.event === (JSON.parse(f.data) as { type: string }).type)).toBe(true)
    expect(frames.map((f) => JSON.parse(f.data) as unknown)).toEqual([
      { type: 'message_start', message: { id: 'msg_mock_1', type: 'message', role: 'assistant', model: 'claude', content: [], stop_reason: null, stop_sequence: null,
        usage: { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 10, output_tokens: 1 } } },
      { type: 'ping' },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'mock-signature-msg_mock_1' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'read', input: {} } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"path":"a"}' } },
      { type: 'content_block_stop', index: 2 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 7 } },
      { type: 'message_stop' },
    ])
  })

  it('answers non-stream requests with whole JSON messages', async () => {
    mock.setScript([{ text: 'ok', usage: { input: 5, output: 1 } }, { toolCalls: [{ name: 'bash', arguments: { command: 'pwd' } }] }])
    expect(await (await post('/chat/completions', chatBody('a', false))).json()).toEqual({
      id: 'chatcmpl-mock-1', object: 'chat.completion', created: 1_700_000_000, model: 'deepseek-chat', system_fingerprint: 'mock',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 5, prompt_tokens_details: { cached_tokens: 0 } },
    })
    const b = await (await post('/v1/messages', { model: 'claude', max_tokens: 9, messages: [] })).json() as Record<string, unknown>
    expect([b.content, b.stop_reason]).toEqual([[{ type: 'tool_use', id: 'call_1', name: 'bash', input: { command: 'pwd' } }], 'tool_use'])
  })

  it('sends scripted HTTP errors with retry-after, in both wire formats', async () => {
    mock.setScript([{ error: { status: 429, message: 'slow down', retryAfter: 3 } }, { error: { status: 529, message: 'busy' } }])
    const a = await post('/chat/completions', chatBody('a'))
    expect([a.status, a.headers.get('retry-after'), await a.json()]).toEqual([429, '3', { error: { message: 'slow down', type: 'rate_limit_error', param: null, code: '429' } }])
    const b = await post('/v1/messages', { model: 'c', max_tokens: 1, stream: true, messages: [] })
    expect([b.status, b.headers.get('retry-after'), await b.json()]).toEqual([529, null, { type: 'error', error: { type: 'overloaded_error', message: 'busy' } }])
  })

  it('plays faults: malformed data, empty stream, in-stream error, cut connection', async () => {
    mock.setScript([{ fault: 'malformed' }, { fault: 'empty' }, { error: { status: 529, message: 'Overloaded', inStream: true } }, { fault: 'cut', text: 'half' }])
    const malformed = sse(await (await post('/chat/completions', chatBody('a'))).text())
    expect(() => JSON.parse(malformed[1]!.data) as unknown).toThrow(SyntaxError)
    const empty = sse(await (await post('/chat/completions', chatBody('a'))).text())
    expect(empty.map((f) => f.data === '[DONE]' ? 'DONE' : (JSON.parse(f.data) as { choices: { delta: unknown }[] }).choices[0]?.delta ?? 'usage'))
      .toEqual([{ role: 'assistant', content: '' }, {}, 'usage', 'DONE'])
    const inStream = sse(await (await post('/v1/messages', { model: 'c', max_tokens: 1, stream: true, messages: [] })).text())
    expect(inStream.map((f) => f.event)).toEqual(['message_start', 'error'])
    expect(JSON.parse(inStream[1]!.data)).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })
    const cut = await post('/chat/completions', chatBody('a'))
    await expect(cut.text()).rejects.toThrow(/terminated/)
  })

  it('fails a request loudly when its expectation is not met', async () => {
    mock.setScript([
      { expect: { lastUserTextIncludes: 'hello', toolsInclude: ['bash'], systemIncludes: 'brief', protocol: 'openai' }, text: 'matched' },
      { expect: { lastUserTextIncludes: 'goodbye', toolsInclude: ['edit'] }, text: 'never sent' },
    ])
    expect((await post('/chat/completions', chatBody('hello there'))).status).toBe(200)
    const res = await post('/chat/completions', chatBody('hello again'))
    expect(res.status).toBe(400)
    const message = 'mock expectation failed at request #2 (step 2): lastUserTextIncludes "goodbye" not found in "hello again"; toolsInclude: tool "edit" not offered (offered: bash)'
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(message)
    expect(mock.failures).toEqual([message])
  })
})

describe('control surface', () => {
  it('lists requests, replaces the script and resets over HTTP', async () => {
    const script = await fetch(`${mock.url}/__mock/script`, { method: 'POST', body: '- text: from yaml\n- text: second\n' })
    expect(await script.json()).toEqual({ ok: true, steps: 2 })
    await (await post('/chat/completions', chatBody('a', false))).text()
    const listed = await (await fetch(`${mock.url}/__mock/requests`)).json() as { protocol: string; body: unknown }[]
    expect(listed.map((r) => [r.protocol, r.body])).toEqual([['openai', chatBody('a', false)]])
    expect(await (await fetch(`${mock.url}/__mock/reset`, { method: 'POST' })).json()).toEqual({ ok: true })
    expect(mock.requests).toEqual([])
    const again = await (await post('/chat/completions', chatBody('b', false))).json() as { choices: { message: { content: string } }[] }
    expect(again.choices[0]!.message.content).toBe('from yaml')
    const bad = await fetch(`${mock.url}/__mock/script`, { method: 'POST', body: JSON.stringify([{ txt: 'typo' }]) })
    expect([bad.status, await bad.json()]).toEqual([400, { error: { message: 'POST /__mock/script: step 1: unknown key "txt" (allowed: text, reasoning, toolCalls, usage, finish, chunkSize, delayMs, expect)' } }])
    expect(await (await fetch(`${mock.url}/__mock/failures`)).json()).toEqual([])
  })
})

describe('scripts', () => {
  it('loads YAML and JSON files and rejects typos with the step and key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mock-script-'))
    try {
      await writeFile(join(dir, 'a.yml'), 'steps:\n  - text: hi\n  - toolCalls:\n      - name: bash\n        arguments: { command: ls }\n  - error: { status: 500 }\n  - fault: stall\n')
      await writeFile(join(dir, 'b.json'), JSON.stringify([{ text: 'json', finish: 'max-tokens' }]))
      await writeFile(join(dir, 'bad.yml'), '- text: ok\n- fault: explode\n')
      expect(await loadScript(join(dir, 'a.yml'))).toEqual([
        { text: 'hi' }, { toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }] }, { error: { status: 500 } }, { fault: 'stall' },
      ])
      expect(await loadScript(join(dir, 'b.json'))).toEqual([{ text: 'json', finish: 'max-tokens' }])
      await expect(loadScript(join(dir, 'bad.yml'))).rejects.toThrow(`${join(dir, 'bad.yml')}: step 2.fault: expected one of cut, malformed, stall, empty`)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('loads the example scripts shipped for the README', async () => {
    const hello = await loadScript(new URL('../scripts/hello.yml', import.meta.url).pathname)
    const tools = await loadScript(new URL('../scripts/tools.yml', import.meta.url).pathname)
    expect(hello).toHaveLength(1)
    expect(tools.map((s) => 'toolCalls' in s ? s.toolCalls?.map((c) => c.name) : 'text' in s ? 'text' : '?')).toEqual([['bash'], 'text'])
  })

  it('rejects wrong types', () => {
    expect(() => parseScript([{ error: { status: 'x' } }])).toThrow('script: step 1.error.status: expected an HTTP status (100-599)')
    expect(() => parseScript([{ toolCalls: [{ arguments: {} }] }])).toThrow('script: step 1.toolCalls[0].name: expected a non-empty string')
    expect(() => parseScript({ step: [] })).toThrow('script: unknown key "step" (allowed: steps)')
  })
})
