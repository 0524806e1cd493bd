import { describe, expect, it } from 'vitest'
import type { SessionEvent } from '@dsh/protocol'
import { BUILTIN_PROVIDERS } from '../src/llm/providers.js'
import { formatModelList, resolveModelChoice } from '../src/commands/builtins.js'
import { parseCommand, unknownReply, type CommandSpec } from '../src/commands/registry.js'
import { contextUse, estimateTokens, formatContextUse, formatStatus, formatTokens } from '../src/commands/status.js'

describe('parseCommand', () => {
  it('splits /name and trimmed args', () => {
    expect(parseCommand('/status')).toEqual({ name: 'status', args: '' })
    expect(parseCommand('  /model  deepseek:deepseek-reasoner  ')).toEqual({ name: 'model', args: 'deepseek:deepseek-reasoner' })
    expect(parseCommand('/plan fix the bug\nthen run tests')).toEqual({ name: 'plan', args: 'fix the bug\nthen run tests' })
    expect(parseCommand('/skill:review-pr_2 x')).toEqual({ name: 'skill:review-pr_2', args: 'x' })
    expect(parseCommand('/clear\n')).toEqual({ name: 'clear', args: '' })
  })

  it('refuses what is not a command', () => {
    for (const text of ['/ foo', '//x', '/', '', 'status', 'run /status', '/usr/bin/env is broken', '/Status', '/foo.bar', '/x?']) {
      expect(parseCommand(text), text).toBeUndefined()
    }
  })
})

describe('unknownReply', () => {
  const spec = (name: string): CommandSpec => ({ name, description: '', source: 'builtin', run: async () => ({}) })
  it('names the unknown command and the available ones', () => {
    expect(unknownReply('nope', [spec('model'), spec('status')])).toBe('Unknown command /nope. Available: /model, /status.')
    expect(unknownReply('nope', [])).toBe('Unknown command /nope. No commands are available.')
  })
})

describe('resolveModelChoice', () => {
  it('resolves provider:id and bare catalogued ids', () => {
    expect(resolveModelChoice('deepseek-reasoner', BUILTIN_PROVIDERS, 'deepseek')).toEqual({ provider: 'deepseek', model: 'deepseek-reasoner', catalogued: true })
    expect(resolveModelChoice('claude-haiku-4-5', BUILTIN_PROVIDERS, 'deepseek')).toEqual({ provider: 'anthropic', model: 'claude-haiku-4-5', catalogued: true })
    expect(resolveModelChoice('openai:my-finetune', BUILTIN_PROVIDERS, 'deepseek')).toEqual({ provider: 'openai', model: 'my-finetune', catalogued: false })
    // a colon that does not follow a known provider is part of the id
    expect(() => resolveModelChoice('llama3:8b', BUILTIN_PROVIDERS, 'deepseek')).toThrow('unknown model "llama3:8b"')
  })

  it('prefers the current provider when several offer the id', () => {
    const twin = { ...BUILTIN_PROVIDERS[0]!, id: 'mirror', label: 'Mirror' }
    expect(resolveModelChoice('deepseek-chat', [...BUILTIN_PROVIDERS, twin], 'mirror').provider).toBe('mirror')
    expect(resolveModelChoice('deepseek-chat', [...BUILTIN_PROVIDERS, twin], 'openai').provider).toBe('deepseek')
  })

  it('lists the choices for an unknown id', () => {
    let error: { code?: string; hint?: string } = {}
    try {
      resolveModelChoice('gpt-9', BUILTIN_PROVIDERS, 'deepseek')
    } catch (e) {
      error = e as typeof error
    }
    expect(error.code).toBe('UNKNOWN_MODEL')
    expect(error.hint).toContain('deepseek:deepseek-chat, deepseek:deepseek-reasoner, openai:gpt-4.1')
    expect(() => resolveModelChoice('deepseek:', BUILTIN_PROVIDERS, 'deepseek')).toThrow('no model id after "deepseek:"')
  })
})

describe('formatModelList', () => {
  it('marks the current model', () => {
    expect(formatModelList(BUILTIN_PROVIDERS.slice(0, 2), { provider: 'deepseek', model: 'deepseek-reasoner' })).toBe([
      'Models (* = current):',
      '  deepseek (DeepSeek): deepseek-chat, deepseek-reasoner *',
      '  openai (OpenAI-compatible): gpt-4.1, gpt-4.1-mini',
      'Switch with /model <id> or /model <provider>:<id>.',
    ].join('\n'))
  })

  it('adds a current model that is not in the catalogue', () => {
    expect(formatModelList(BUILTIN_PROVIDERS.slice(1, 2), { provider: 'openai', model: 'ft-1' }).split('\n')).toEqual([
      'Models (* = current):', '  openai (OpenAI-compatible): gpt-4.1, gpt-4.1-mini', '  current: openai:ft-1 *', 'Switch with /model <id> or /model <provider>:<id>.',
    ])
  })
})

describe('status formatting', () => {
  it('formats token counts', () => {
    expect([0, 950, 1000, 12_300, 12_345, 128_000, 999_949, 999_950, 1_000_000, 1_500_000].map(formatTokens))
      .toEqual(['0', '950', '1k', '12.3k', '12.3k', '128k', '999.9k', '1M', '1M', '1.5M'])
  })

  it('formats context use, marking estimates', () => {
    expect(formatContextUse({ tokens: 12_300, window: 128_000, estimated: false })).toBe('12.3k / 128k tokens (10%)')
    expect(formatContextUse({ tokens: 64_000, window: 128_000, estimated: true })).toBe('~64k / 128k tokens (50%)')
  })

  const event = (seq: number, type: string, data: unknown) => ({ type, seq, time: 0, data }) as SessionEvent
  const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'x'.repeat(400) }] }]

  it('takes the last reported input tokens', () => {
    const events = [
      event(0, 'assistant/message', { id: '1:1', content: [], finish: 'stop', usage: { inputTokens: 100, outputTokens: 5 } }),
      event(1, 'assistant/message', { id: '2:1', content: [], finish: 'stop' }),
      event(2, 'assistant/message', { id: '2:2', content: [], finish: 'stop', usage: { inputTokens: 12_300, outputTokens: 7 } }),
      event(3, 'assistant/message', { id: '3:1', content: [], finish: 'stop' }),
    ]
    expect(contextUse(events, messages, 128_000)).toEqual({ tokens: 12_300, window: 128_000, estimated: false })
  })

  it('estimates chars/4 of history + header when no usage was reported or history was replaced since', () => {
    const header = { system: 's'.repeat(40), tools: [], config: { provider: 'deepseek', model: 'deepseek-chat' } }
    const expected = Math.ceil((JSON.stringify(messages).length + 40 + 2) / 4)
    expect(estimateTokens(messages, header)).toBe(expected)
    expect(contextUse([event(0, 'request/header', header)], messages, 1000)).toEqual({ tokens: expected, window: 1000, estimated: true })
    const replaced = [
      event(0, 'request/header', header),
      event(1, 'assistant/message', { id: '1:1', content: [], finish: 'stop', usage: { inputTokens: 900, outputTokens: 5 } }),
      event(2, 'history/replace', { fromSeq: 0, toSeq: 1, summary: 'x' }),
    ]
    expect(contextUse(replaced, messages, 1000)).toEqual({ tokens: expected, window: 1000, estimated: true })
    expect(contextUse([], [], 1000)).toEqual({ tokens: 1, window: 1000, estimated: true })
  })

  it('renders the status lines, leaving out what is not mounted', () => {
    const context = { tokens: 12_300, window: 128_000, estimated: false }
    expect(formatStatus({
      sessionId: 's1', title: 'Fix the tests', cwd: '/w', provider: 'deepseek', model: 'deepseek-reasoner', reasoningEffort: 'high',
      agentPreset: 'code', permissionPreset: 'read-only', planMode: true, context,
    })).toBe([
      'session     s1 — Fix the tests',
      'workspace   /w',
      'model       deepseek:deepseek-reasoner (effort high)',
      'agent       code',
      'permission  read-only',
      'plan mode   on',
      'context     12.3k / 128k tokens (10%)',
    ].join('\n'))
    expect(formatStatus({ sessionId: 's1', cwd: '/w', provider: 'p', model: 'm', permissionPreset: 'workspace-write', context })).toBe([
      'session     s1', 'workspace   /w', 'model       p:m', 'permission  workspace-write', 'context     12.3k / 128k tokens (10%)',
    ].join('\n'))
  })

  it('lists MCP servers one per line under an mcp label', () => {
    const context = { tokens: 10, window: 1000, estimated: false }
    expect(formatStatus({ sessionId: 's1', cwd: '/w', provider: 'p', model: 'm', permissionPreset: 'read-only', context, mcp: ['fs: ready, 3 tools, trusted', 'web: starting'] }).split('\n').slice(-2)).toEqual([
      'mcp         fs: ready, 3 tools, trusted',
      '            web: starting',
    ])
  })
})
