// The mock's OpenAI Responses API wire (POST /v1/responses): the event stream codex reads,
// whole JSON answers, expectations read from Responses input items, errors and faults.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startMockModel, type MockModel } from '@dsh/testkit'

let mock: MockModel

beforeEach(async () => {
  mock = await startMockModel()
})
afterEach(async () => {
  await mock.close()
})

/** A request shaped like codex's: instructions in developer messages, input_text parts, a namespace of tools. */
const responsesBody = (extraInput: unknown[] = [], stream = true) => ({
  model: 'gpt-mock',
  instructions: 'top instructions',
  input: [
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are a coding agent' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'run true' }] },
    ...extraInput,
  ],
  tools: [
    { type: 'function', name: 'exec_command', parameters: { type: 'object' } },
    { type: 'namespace', name: 'multi_agent', tools: [{ type: 'function', name: 'spawn_agent' }] },
    { type: 'web_search' },
  ],
  stream,
})

async function post(body: unknown, path = '/v1/responses'): Promise<Response> {
  return fetch(`${mock.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-secret' }, body: JSON.stringify(body) })
}

type Event = { type: string; sequence_number: number } & Record<string, unknown>

/** The events of an SSE body; every frame must name its event and carry the same type in its data. */
async function events(res: Response): Promise<Event[]> {
  return (await res.text()).split('\n\n').filter((f) => f.trim() !== '').map((frame) => {
    const lines = frame.split('\n')
    const name = lines.find((l) => l.startsWith('event: '))?.slice(7)
    const data = JSON.parse(lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')) as Event
    expect(data.type).toBe(name)
    return data
  })
}

describe('Responses API wire', () => {
  it('streams reasoning, text and function calls with the real event names, numbered, ending in response.completed', async () => {
    mock.setScript([{ reasoning: 'hmm', text: 'Hi there', chunkSize: 4, toolCalls: [{ name: 'exec_command', arguments: { cmd: 'true' } }], usage: { input: 50, output: 9, cacheRead: 20 } }])
    const res = await post(responsesBody())
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    const evs = await events(res)
    expect(evs.map((e) => e.sequence_number)).toEqual(evs.map((_, i) => i))
    expect(evs.map((e) => e.type)).toEqual([
      'response.created', 'response.in_progress',
      'response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.delta',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta',
      'response.function_call_arguments.delta', 'response.function_call_arguments.delta', 'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ])
    expect(evs.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta)).toEqual(['Hi t', 'here'])
    expect(evs.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e.delta).join('')).toBe('{"cmd":"true"}')
    const call = { type: 'function_call', id: 'fc_call_1', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"true"}', status: 'completed' }
    expect(evs[15]).toMatchObject({ output_index: 2, item: { ...call, arguments: '', status: 'in_progress' } })
    expect(evs[21]).toMatchObject({ output_index: 2, item: call })
    expect(evs.at(-1)!.response).toEqual({
      id: 'resp_mock_1', object: 'response', created_at: 1_700_000_000, status: 'completed', model: 'gpt-mock',
      output: [
        { type: 'reasoning', id: 'rs_resp_mock_1', summary: [{ type: 'summary_text', text: 'hmm' }] },
        { type: 'message', id: 'msg_resp_mock_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hi there', annotations: [] }] },
        call,
      ],
      usage: { input_tokens: 50, input_tokens_details: { cached_tokens: 20 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 1 }, total_tokens: 59 },
    })
    expect(mock.requests.map((r) => [r.protocol, r.path, r.headers.authorization])).toEqual([['responses', '/v1/responses', '<redacted>']])
  })

  it('answers a request without stream: true with the whole response object; max-tokens is incomplete', async () => {
    mock.setScript([{ text: 'ok', usage: { input: 5, output: 1 } }, { text: 'cut sh', finish: 'max-tokens' }])
    expect(await (await post(responsesBody([], false), '/responses')).json()).toEqual({
      id: 'resp_mock_1', object: 'response', created_at: 1_700_000_000, status: 'completed', model: 'gpt-mock',
      output: [{ type: 'message', id: 'msg_resp_mock_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }],
      usage: { input_tokens: 5, input_tokens_details: { cached_tokens: 0 }, output_tokens: 1, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 6 },
    })
    const last = (await events(await post(responsesBody()))).at(-1)!
    expect([last.type, (last.response as Record<string, unknown>).status, (last.response as Record<string, unknown>).incomplete_details])
      .toEqual(['response.incomplete', 'incomplete', { reason: 'max_output_tokens' }])
  })

  it('checks expectations against Responses input items: instructions, developer text, user text, function_call_output, namespaced tools', async () => {
    const afterCall = [
      { type: 'function_call', id: 'fc_call_1', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"true"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'Process exited with code 0' },
    ]
    mock.setScript([
      { text: 'a', expect: { protocol: 'responses', systemIncludes: 'coding agent', lastUserTextIncludes: 'run true', toolsInclude: ['exec_command', 'spawn_agent', 'web_search'], model: 'gpt-mock' } },
      { text: 'b', expect: { systemIncludes: 'top instructions', lastToolResultIncludes: 'exited with code 0' } },
      { text: 'c', expect: { lastToolResultIncludes: 'code 1', toolsInclude: ['shell'] } },
    ])
    expect((await post(responsesBody())).status).toBe(200)
    expect((await post(responsesBody(afterCall))).status).toBe(200)
    const bad = await post(responsesBody(afterCall))
    expect(bad.status).toBe(400)
    const { error } = await bad.json() as { error: { message: string; type: string } }
    expect(error.type).toBe('invalid_request_error')
    expect(error.message).toContain('lastToolResultIncludes "code 1" not found in "Process exited with code 0"')
    expect(error.message).toContain('toolsInclude: tool "shell" not offered (offered: exec_command, spawn_agent, web_search)')
    expect(mock.failures).toHaveLength(1)
  })

  it('sends HTTP errors as OpenAI error bodies, and in-stream errors as response.failed', async () => {
    mock.setScript([{ error: { status: 429, message: 'slow down', retryAfter: 2 } }, { error: { status: 500, message: 'boom', inStream: true } }])
    const a = await post(responsesBody())
    expect([a.status, a.headers.get('retry-after'), await a.json()]).toEqual([429, '2', { error: { message: 'slow down', type: 'rate_limit_error', param: null, code: '429' } }])
    const b = await events(await post(responsesBody()))
    expect(b.map((e) => e.type)).toEqual(['response.created', 'response.failed'])
    expect((b[1]!.response as Record<string, unknown>).error).toEqual({ code: 'server_error', message: 'boom' })
  })

  it('plays faults: malformed data, an empty completed response, a cut connection', async () => {
    mock.setScript([{ fault: 'malformed' }, { fault: 'empty' }, { fault: 'cut', text: 'half' }])
    const malformed = await (await post(responsesBody())).text()
    expect(malformed).toContain('event: response.output_item.added\ndata: {"type": "response.output_item.added", oops')
    const empty = await events(await post(responsesBody()))
    expect(empty.map((e) => e.type)).toEqual(['response.created', 'response.in_progress', 'response.completed'])
    expect((empty[2]!.response as Record<string, unknown>).output).toEqual([])
    const cut = await post(responsesBody())
    await expect(cut.text()).rejects.toThrow(/terminated/)
  })
})
