import { describe, expect, it } from 'vitest'
import type { GenerateRequest } from '@dsh/protocol'
import { breakpointIndices, buildMessagesRequest, thinkingBudget, withBreakpoint } from '@dsh/llm-anthropic'

const history: GenerateRequest = {
  config: { provider: 'anthropic', model: 'claude-sonnet-4-5', reasoningEffort: 'medium', temperature: 0.5 },
  system: 'You are dsh.',
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'List files' }, { type: 'image', mimeType: 'image/png', data: 'AAAA' }] },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Need ls.', signature: 'sig-1' },
        { type: 'reasoning', text: '', redacted: 'ENCRYPTED' },
        { type: 'reasoning', text: 'unsigned, from another provider' },
        { type: 'text', text: '' },
        { type: 'text', text: 'Running both.' },
        { type: 'tool-call', id: 'toolu_1', name: 'bash', arguments: '{"command":"ls"}' },
        { type: 'tool-call', id: 'toolu_2', name: 'read', arguments: '{"path": ' },
      ],
    },
    { role: 'tool', callId: 'toolu_1', name: 'bash', content: [{ type: 'text', text: 'a.txt' }], isError: false },
    { role: 'tool', callId: 'toolu_2', name: 'read', content: [{ type: 'text', text: 'invalid arguments' }], isError: true },
    { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
    { role: 'tool', callId: 'toolu_3', name: 'bash', content: [{ type: 'image', mimeType: 'image/jpeg', data: 'QUJD' }], isError: false },
  ],
  tools: [{ name: 'bash', description: 'Run a command', parameters: { type: 'object', properties: { command: { type: 'string' } } } }],
  signal: new AbortController().signal,
}

describe('buildMessagesRequest', () => {
  it('translates a whole history', () => {
    expect(buildMessagesRequest(history)).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 8192 + 8192,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'List files' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Need ls.', signature: 'sig-1' },
            { type: 'redacted_thinking', data: 'ENCRYPTED' },
            { type: 'text', text: 'Running both.' },
            { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } },
            { type: 'tool_use', id: 'toolu_2', name: 'read', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'a.txt' }] },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'invalid arguments' }], is_error: true },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'thanks', cache_control: { type: 'ephemeral' } }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_3', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'QUJD' } }], cache_control: { type: 'ephemeral' } }],
        },
      ],
      stream: true,
      system: [{ type: 'text', text: 'You are dsh.', cache_control: { type: 'ephemeral' } }],
      tools: [{ name: 'bash', description: 'Run a command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
      thinking: { type: 'enabled', budget_tokens: 8192 },
    })
  })

  it('sends only what is configured; max_tokens defaults to 8192', () => {
    const minimal: GenerateRequest = {
      config: { provider: 'anthropic', model: 'm', temperature: 0 },
      system: '',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      tools: [],
      signal: new AbortController().signal,
    }
    expect(buildMessagesRequest(minimal)).toEqual({
      model: 'm', max_tokens: 8192, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }], stream: true, temperature: 0,
    })
  })

  it('puts the tools breakpoint on the last tool when there is no system prompt', () => {
    const tool = (name: string) => ({ name, description: name, parameters: {} })
    const req: GenerateRequest = { ...history, system: '', messages: [], tools: [tool('a'), tool('b')] }
    expect(buildMessagesRequest(req).tools).toEqual([
      { name: 'a', description: 'a', input_schema: {} },
      { name: 'b', description: 'b', input_schema: {}, cache_control: { type: 'ephemeral' } },
    ])
    expect(buildMessagesRequest(req).system).toBeUndefined()
  })

  it('marks the last two user messages only, whatever their kind; thinking blocks and empty messages are never marked', () => {
    expect(breakpointIndices(['user', 'assistant', 'user', 'assistant', 'user'])).toEqual([2, 4])
    expect(breakpointIndices(['user', 'assistant'])).toEqual([0])
    expect(breakpointIndices(['assistant', 'assistant'])).toEqual([])
    expect(breakpointIndices([])).toEqual([])
    expect(withBreakpoint({ role: 'user', content: [] })).toEqual({ role: 'user', content: [] })
    const thinking = { role: 'assistant' as const, content: [{ type: 'thinking' as const, thinking: 't', signature: 's' }] }
    expect(withBreakpoint(thinking)).toBe(thinking)
    const original = { role: 'user' as const, content: [{ type: 'text' as const, text: 'a' }, { type: 'text' as const, text: 'b' }] }
    expect(withBreakpoint(original)).toEqual({ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b', cache_control: { type: 'ephemeral' } }] })
    expect(original.content[1]).toEqual({ type: 'text', text: 'b' }) // the input is not changed
  })

  it('caps the thinking budget under max_tokens and drops thinking below the API minimum', () => {
    expect(thinkingBudget('off', undefined)).toBeUndefined()
    expect(thinkingBudget('max', undefined)).toBe(32768)
    expect(thinkingBudget('high', 4000)).toBe(3999)
    expect(thinkingBudget('low', 1000)).toBeUndefined()
  })
})
