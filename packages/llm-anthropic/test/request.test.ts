import { describe, expect, it } from 'vitest'
import type { GenerateRequest } from '@dsh/protocol'
import { buildMessagesRequest, thinkingBudget } from '@dsh/llm-anthropic'

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
      system: 'You are dsh.',
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
        { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_3', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'QUJD' } }] }] },
      ],
      tools: [{ name: 'bash', description: 'Run a command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
      stream: true,
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
      model: 'm', max_tokens: 8192, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: true, temperature: 0,
    })
  })

  it('caps the thinking budget under max_tokens and drops thinking below the API minimum', () => {
    expect(thinkingBudget('off', undefined)).toBeUndefined()
    expect(thinkingBudget('max', undefined)).toBe(32768)
    expect(thinkingBudget('high', 4000)).toBe(3999)
    expect(thinkingBudget('low', 1000)).toBeUndefined()
  })
})
