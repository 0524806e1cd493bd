import { describe, expect, it } from 'vitest'
import type { GenerateRequest } from '@dsh/protocol'
import { buildChatRequest } from '@dsh/llm-openai'

const history: GenerateRequest = {
  config: { provider: 'deepseek', model: 'deepseek-chat', maxTokens: 4000, reasoningEffort: 'high', temperature: 0.2 },
  system: 'You are dsh.',
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'List files' }, { type: 'text', text: 'and read a.txt' }] },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Need ls and read.' },
        { type: 'text', text: 'Running both.' },
        { type: 'tool-call', id: 'call_1', name: 'bash', arguments: '{"command":"ls"}' },
        { type: 'tool-call', id: 'call_2', name: 'read', arguments: '{"path": "a.txt" }' },
      ],
    },
    { role: 'tool', callId: 'call_1', name: 'bash', content: [{ type: 'text', text: 'a.txt\nb.txt' }], isError: false },
    { role: 'tool', callId: 'call_2', name: 'read', content: [{ type: 'text', text: 'no such file' }, { type: 'image', mimeType: 'image/png', data: 'AAAA' }], isError: true },
    { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', mimeType: 'image/jpeg', data: 'QUJD' }] },
    { role: 'assistant', content: [{ type: 'tool-call', id: 'call_3', name: 'bash', arguments: '{}' }] },
  ],
  tools: [{ name: 'bash', description: 'Run a command', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } }],
  signal: new AbortController().signal,
}

describe('buildChatRequest', () => {
  it('translates a whole history', () => {
    expect(buildChatRequest(history)).toEqual({
      model: 'deepseek-chat',
      messages: [
        { role: 'system', content: 'You are dsh.' },
        { role: 'user', content: 'List files\nand read a.txt' },
        {
          role: 'assistant',
          content: 'Running both.',
          reasoning_content: 'Need ls and read.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
            { id: 'call_2', type: 'function', function: { name: 'read', arguments: '{"path": "a.txt" }' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'a.txt\nb.txt' },
        { role: 'tool', tool_call_id: 'call_2', content: 'no such file\n[image omitted: image/png]' },
        { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,QUJD' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
      ],
      tools: [{ type: 'function', function: { name: 'bash', description: 'Run a command', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } } }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 4000,
      temperature: 0.2,
      reasoning_effort: 'high',
    })
  })

  it('sends only what is configured', () => {
    const minimal: GenerateRequest = {
      config: { provider: 'deepseek', model: 'm', reasoningEffort: 'off' },
      system: '',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      tools: [],
      signal: new AbortController().signal,
    }
    expect(buildChatRequest(minimal)).toEqual({
      model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true },
    })
    expect(buildChatRequest({ ...minimal, config: { ...minimal.config, reasoningEffort: 'max' } }).reasoning_effort).toBe('high')
    expect(buildChatRequest({ ...minimal, config: { ...minimal.config, reasoningEffort: 'low' } }).reasoning_effort).toBe('low')
  })
})
