import type { SessionEvent } from '@dsh/protocol'
import { describe, expect, it } from 'vitest'
import { parseAcpArgs } from '../src/args.js'
import { configOptions, modelValue, parseModelValue } from '../src/config.js'
import { ForkError, forkCut, messageFingerprint, parseForkMeta } from '../src/fork.js'
import { replayUpdates, titleOf } from '../src/history.js'
import { outcomeOf, permissionRequest } from '../src/permission.js'
import { MAX_IMAGE_BYTES, PromptError, slashCommand, toUserContent } from '../src/prompt.js'
import type { Presenter } from '../src/translate.js'
import { callToWire, fence, progressToWire, resultToWire, terminalId } from '../src/wire.js'

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
const opts = (terminalOutput: boolean) => ({ terminalOutput, cwd: '/ws' })
const ok = (text: string) => ({ content: [{ type: 'text' as const, text }], isError: false })

describe('wire: card → ACP', () => {
  it('fences with a longer fence than any backtick run inside', () => {
    expect(fence('a', 'console')).toBe('```console\na\n```')
    expect(fence('x ``` y')).toBe('````\nx ``` y\n````')
    expect(fence('')).toBe('```\n```')
  })

  it('maps every call card; relative paths resolve against the session workspace', () => {
    expect(callToWire('c', { card: 'generic', title: 'T', kind: 'search', description: 'd', locations: [{ path: 'a', line: 3 }] }, { x: 1 }, opts(true))).toEqual({
      rawInput: { x: 1 }, title: 'T', kind: 'search', content: [{ type: 'content', content: { type: 'text', text: 'd' } }], locations: [{ path: '/ws/a', line: 3 }],
    })
    expect(callToWire('c', { card: 'terminal', title: 'ls', cwd: 'sub' }, null, opts(true))).toEqual({
      rawInput: null, title: 'ls', kind: 'execute', locations: [], content: [{ type: 'terminal', terminalId: 'dsh-term:c' }],
      _meta: { terminal_info: { terminal_id: 'dsh-term:c', cwd: '/ws/sub' } },
    })
    expect(callToWire('c', { card: 'terminal', title: 'ls' }, null, opts(false))).toEqual({ rawInput: null, title: 'ls', kind: 'execute', locations: [], content: [] })
    expect(callToWire('c', { card: 'diff', title: 'W', path: '/abs/f', oldText: null, newText: 'n' }, null, opts(false))).toEqual({
      rawInput: null, title: 'W', kind: 'edit', content: [{ type: 'diff', path: '/abs/f', oldText: null, newText: 'n' }], locations: [{ path: '/abs/f' }],
    })
    expect(callToWire('c', { card: 'read', title: 'R', path: 'f', line: 9 }, null, opts(false))).toMatchObject({ kind: 'read', locations: [{ path: '/ws/f', line: 9 }] })
    expect(callToWire('c', { card: 'web', title: 'W', url: 'https://x' }, null, opts(false))).toMatchObject({ kind: 'fetch' })
    expect(terminalId('call_7')).toBe('dsh-term:call_7')
  })

  it('terminal results: what was not streamed, then the exit (signal or code); no content', () => {
    const call = { card: 'terminal' as const, title: 'x' }
    expect(resultToWire('c', call, { card: 'terminal', output: 'a\nb', exitCode: 0 }, ok('a\nb'), opts(true))).toEqual([
      { toolCallId: 'c', _meta: { terminal_output: { terminal_id: 'dsh-term:c', data: 'a\nb' } } },
      { toolCallId: 'c', status: 'completed', rawOutput: { content: [{ type: 'text', text: 'a\nb' }], isError: false }, _meta: { terminal_exit: { terminal_id: 'dsh-term:c', exit_code: 0 } } },
    ])
    const streamed = resultToWire('c', call, { card: 'terminal', output: 'a\nb\n[timed out after 5ms]', signal: 'SIGTERM' }, ok('…'), opts(true), 'a\nb\n')
    expect(streamed).toEqual([
      { toolCallId: 'c', _meta: { terminal_output: { terminal_id: 'dsh-term:c', data: '\n[timed out after 5ms]' } } },
      { toolCallId: 'c', status: 'completed', rawOutput: { content: [{ type: 'text', text: '…' }], isError: false }, _meta: { terminal_exit: { terminal_id: 'dsh-term:c', signal: 'SIGTERM' } } },
    ])
    expect(resultToWire('c', call, { card: 'terminal', output: 'a', exitCode: 0 }, ok('a'), opts(true), 'a\n')).toHaveLength(1)
  })

  it('terminal results without the capability: description and a console fence with the exit marker', () => {
    expect(resultToWire('c', { card: 'terminal', title: 'x', description: 'D' }, { card: 'terminal', output: 'out', exitCode: 2 }, ok('out'), opts(false))).toEqual([{
      toolCallId: 'c', status: 'completed', rawOutput: { content: [{ type: 'text', text: 'out' }], isError: false },
      content: [{ type: 'content', content: { type: 'text', text: 'D' } }, { type: 'content', content: { type: 'text', text: '```console\nout\n[exit code: 2]\n```' } }],
    }])
    expect(progressToWire('c', { card: 'terminal', title: 'x' }, 'so far', 'far', opts(false))).toEqual({
      toolCallId: 'c', status: 'in_progress', content: [{ type: 'content', content: { type: 'text', text: '```console\nso far\n```' } }],
    })
    expect(progressToWire('c', { card: 'terminal', title: 'x' }, 'so far', 'far', opts(true))).toEqual({ toolCallId: 'c', _meta: { terminal_output: { terminal_id: 'dsh-term:c', data: 'far' } } })
  })

  it('a generic error result on a terminal call fails with its text', () => {
    const failed = { content: [{ type: 'text' as const, text: 'Denied: no' }], isError: true }
    expect(resultToWire('c', { card: 'terminal', title: 'x' }, { card: 'generic', text: 'Denied: no', isError: true }, failed, opts(true))).toEqual([{
      toolCallId: 'c', status: 'failed', rawOutput: { content: [{ type: 'text', text: 'Denied: no' }], isError: true }, content: [{ type: 'content', content: { type: 'text', text: 'Denied: no' } }],
    }])
  })
})

describe('history: replay of a stored log', () => {
  const present: Presenter = {
    call: (name, args) => (name === 'sh' ? { card: 'terminal', title: String((args as { c: string }).c) } : { card: 'generic', title: name }),
    result: (name, _args, result) => (name === 'sh' ? { card: 'terminal', output: (result.content[0] as { text: string }).text, exitCode: 0 } : { card: 'generic', text: 'r' }),
  }
  const ev = (seq: number, type: string, data: unknown): SessionEvent => ({ type, seq, time: 0, data: data as never })

  it('replays user text and images, assembled messages (not chunks), calls with their final state, plans', () => {
    const events = [
      ev(0, 'user/message', { id: 'u-0', content: [{ type: 'text', text: 'hi' }, { type: 'image', mimeType: 'image/png', data: PNG }] }),
      ev(1, 'assistant/chunk', { messageId: '1:1', kind: 'text', delta: 'ignored' }),
      ev(2, 'assistant/message', { id: '1:1', content: [{ type: 'reasoning', text: 'r' }, { type: 'text', text: 't' }, { type: 'tool-call', id: 'k', name: 'sh', arguments: '{"c":"ls"}' }], finish: 'tool-calls' }),
      ev(3, 'tool/call', { callId: 'k', name: 'sh', args: { c: 'ls' } }),
      ev(4, 'tool/result', { callId: 'k', name: 'sh', content: [{ type: 'text', text: 'f' }], isError: false }),
      ev(5, 'todo/write', { todos: [{ content: 'a', status: 'pending' }] }),
      ev(6, 'session/title', { title: 'T', source: 'prompt' }),
    ]
    expect(replayUpdates(events, opts(false), present)).toEqual([
      { sessionUpdate: 'user_message_chunk', messageId: 'u-0', content: { type: 'text', text: 'hi' } },
      { sessionUpdate: 'user_message_chunk', messageId: 'u-0', content: { type: 'image', mimeType: 'image/png', data: PNG } },
      { sessionUpdate: 'agent_thought_chunk', messageId: '1:1', content: { type: 'text', text: 'r' } },
      { sessionUpdate: 'agent_message_chunk', messageId: '1:1', content: { type: 'text', text: 't' } },
      { sessionUpdate: 'tool_call', toolCallId: 'k', status: 'pending', title: 'ls', kind: 'execute', content: [], locations: [], rawInput: { c: 'ls' } },
      { sessionUpdate: 'tool_call_update', toolCallId: 'k', status: 'completed', rawOutput: { content: [{ type: 'text', text: 'f' }], isError: false }, content: [{ type: 'content', content: { type: 'text', text: '```console\nf\n```' } }] },
      { sessionUpdate: 'plan', entries: [{ content: 'a', priority: 'medium', status: 'pending' }] },
    ])
    expect(titleOf(events)).toBe('T')
  })

  it('a result whose call was cut away (fork at the message) still shows the call, from the message', () => {
    const events = [
      ev(0, 'assistant/message', { id: '1:1', content: [{ type: 'tool-call', id: 'k', name: 'sh', arguments: '{"c":"pwd"}' }], finish: 'tool-calls' }),
      ev(1, 'tool/result', { callId: 'k', name: 'sh', content: [{ type: 'text', text: '[interrupted]' }], isError: true, synthetic: true }),
    ]
    expect(replayUpdates(events, opts(false), present).map((u) => [u.sessionUpdate, (u as { title?: string }).title, (u as { status?: string }).status])).toEqual([
      ['tool_call', 'pwd', 'pending'], ['tool_call_update', undefined, 'failed'],
    ])
  })
})

describe('fork references', () => {
  const msg = (seq: number, id: string, text: string): SessionEvent => ({ type: 'assistant/message', seq, time: 0, data: { id, content: [{ type: 'text', text }], finish: 'stop' } as never })
  const events = [msg(0, '1:1', 'one'), msg(1, '2:1', 'two'), msg(2, '2:1', 'again')]

  it('parses the _meta block strictly; absent means a whole-session fork', () => {
    expect(parseForkMeta(undefined)).toBeUndefined()
    expect(parseForkMeta({ other: 1 })).toBeUndefined()
    expect(parseForkMeta({ jetbrains: { air: { fork: { version: 1, messageId: '1:1' } } } })).toEqual({ version: 1, messageId: '1:1' })
    for (const bad of [{ version: 2, messageId: 'x' }, { version: 1 }, { version: 1, messageId: 'x', messageFingerprint: 'md5:1' }, { version: 1, messageId: 'x', messageOccurrence: 0 }, 'x']) {
      expect(() => parseForkMeta({ jetbrains: { air: { fork: bad } } })).toThrow(ForkError)
    }
  })

  it('cuts inclusively at the message; segments, occurrence and fingerprint disambiguate; misses throw', () => {
    expect(forkCut(events, { version: 1, messageId: '1:1' })).toBe(0)
    expect(forkCut(events, { version: 1, messageId: '1:1:segment:2' })).toBe(0)
    expect(forkCut(events, { version: 1, messageId: '2:1', messageOccurrence: 2 })).toBe(2)
    expect(forkCut(events, { version: 1, messageId: '2:1', messageFingerprint: messageFingerprint('two') })).toBe(1)
    expect(() => forkCut(events, { version: 1, messageId: '2:1' })).toThrow(/ambiguous/)
    expect(() => forkCut(events, { version: 1, messageId: '9:9' })).toThrow(ForkError)
    expect(() => forkCut(events, { version: 1, messageId: '1:1', messageFingerprint: messageFingerprint('x') })).toThrow(/fingerprint/)
    expect(messageFingerprint('one')).toBe('sha256:7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed')
  })
})

describe('prompt content', () => {
  it('accepts text, valid images, resource links and embedded text resources', () => {
    expect(toUserContent([
      { type: 'text', text: 'see' },
      { type: 'image', mimeType: 'image/png', data: PNG },
      { type: 'resource_link', name: 'a.ts', uri: 'file:///ws/a.ts', mimeType: 'text/x-typescript', size: 12 },
      { type: 'resource', resource: { uri: 'file:///ws/b.md', text: '# B', mimeType: 'text/markdown' } },
    ])).toEqual([
      { type: 'text', text: 'see' },
      { type: 'image', mimeType: 'image/png', data: PNG },
      { type: 'text', text: '[linked resource: a.ts at /ws/a.ts (type text/x-typescript, 12 bytes)]' },
      { type: 'text', text: '<resource uri="/ws/b.md" type="text/markdown">\n# B\n</resource>' },
    ])
  })

  it('refuses what it cannot honour, naming the block', () => {
    const big = Buffer.alloc(MAX_IMAGE_BYTES + 1)
    Buffer.from(PNG, 'base64').copy(big)
    const cases: [unknown, RegExp][] = [
      [[], /empty/],
      [[{ type: 'image', mimeType: 'image/bmp', data: PNG }], /prompt\[0\]: image type "image\/bmp"/],
      [[{ type: 'image', mimeType: 'image/gif', data: PNG }], /not image\/gif/],
      [[{ type: 'image', mimeType: 'image/png', data: 'not base64!' }], /base64/],
      [[{ type: 'image', mimeType: 'image/png', data: big.toString('base64') }], /limit is 5242880/],
      [[{ type: 'text', text: 'x' }, { type: 'audio', mimeType: 'audio/wav', data: 'AAAA' }], /prompt\[1\]: audio/],
      [[{ type: 'resource', resource: { uri: 'file:///x.bin', blob: 'AAAA', mimeType: 'application/octet-stream' } }], /binary resource/],
    ]
    for (const [blocks, message] of cases) expect(() => toUserContent(blocks as never)).toThrow(message)
    expect(() => toUserContent([{ type: 'audio', mimeType: 'a', data: '' }] as never)).toThrow(PromptError)
  })

  it('recognises a whole-prompt slash command', () => {
    expect(slashCommand([{ type: 'text', text: ' /model  gpt-4.1 ' }])).toEqual({ name: 'model', args: 'gpt-4.1' })
    expect(slashCommand([{ type: 'text', text: 'hi /model' }])).toBeUndefined()
    expect(slashCommand([{ type: 'text', text: '/x' }, { type: 'text', text: 'y' }])).toBeUndefined()
  })
})

describe('config options', () => {
  const providers = [
    { id: 'deepseek', label: 'DeepSeek', models: [{ id: 'deepseek-chat' }, { id: 'shared' }] },
    { id: 'other', label: 'Other', models: [{ id: 'shared' }, { id: 'o1' }] },
  ]

  it('model ids are bare when one provider offers the model, provider::model otherwise', () => {
    expect(modelValue(providers, 'deepseek', 'deepseek-chat')).toBe('deepseek-chat')
    expect(modelValue(providers, 'other', 'shared')).toBe('other::shared')
    expect(parseModelValue(providers, 'o1')).toEqual({ provider: 'other', model: 'o1' })
    expect(parseModelValue(providers, 'deepseek::shared')).toEqual({ provider: 'deepseek', model: 'shared' })
    expect(parseModelValue(providers, 'shared')).toBeUndefined()
    expect(parseModelValue(providers, 'other::nope')).toBeUndefined()
  })

  it('lists mode, model and effort (and agent presets when mounted) with current values', () => {
    const options = configOptions({ presets: [{ id: 'p', sandbox: 'read-only', approval: 'ask', description: 'P' }], mode: 'p', providers, provider: 'other', model: 'shared', effort: undefined, agents: { list: [{ id: 'standard' }], current: 'standard' } })
    expect(options.map((o) => [o.id, o.category, o.currentValue])).toEqual([['mode', 'mode', 'p'], ['model', 'model', 'other::shared'], ['reasoning_effort', 'thought_level', 'default'], ['agent', undefined, 'standard']])
    expect((options[1] as { options: { value: string }[] }).options.map((o) => o.value)).toEqual(['deepseek-chat', 'deepseek::shared', 'other::shared', 'o1'])
  })
})

describe('permission requests', () => {
  it('labels allow-always with the scope and maps answers back', () => {
    const request = permissionRequest('s', { id: 'ap-1', kind: 'tool', callId: 'c', tool: 'write', title: 'write', rawInput: { path: 'f' }, card: { card: 'diff', title: 'Write f', path: 'f', oldText: null, newText: 'x' }, scope: { key: 'tool:write', label: 'every write call in this session' } }, undefined, '/ws')
    expect(request).toEqual({
      sessionId: 's',
      toolCall: { toolCallId: 'c', title: 'Write f', kind: 'edit', status: 'pending', content: [{ type: 'diff', path: '/ws/f', oldText: null, newText: 'x' }], locations: [{ path: '/ws/f' }], rawInput: { path: 'f' } },
      options: [
        { optionId: 'allow-once', name: 'Allow once', kind: 'allow_once' },
        { optionId: 'allow-always', name: 'Always allow: every write call in this session', kind: 'allow_always' },
        { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
      ],
    })
    expect(outcomeOf({ outcome: { outcome: 'cancelled' } })).toBe('cancelled')
    expect(outcomeOf({ outcome: { outcome: 'selected', optionId: 'allow-always' } })).toBe('allow-always')
    expect(outcomeOf({ outcome: { outcome: 'selected', optionId: 'reject' } })).toBe('reject')
  })
})

describe('surface arguments', () => {
  it('flags win over DSH_* env; bad values are USAGE errors', () => {
    expect(parseAcpArgs(['--model', 'm1', '--max-tokens=100'], { DSH_MODEL: 'm2', DSH_PROVIDER: 'openai', DSH_PERMISSION_MODE: 'read-only', DSH_REASONING_EFFORT: 'high' })).toEqual({
      type: 'serve', defaults: { provider: 'openai', model: 'm1', maxTokens: 100, permissionMode: 'read-only', reasoningEffort: 'high' },
    })
    expect(parseAcpArgs(['login', '--provider', 'anthropic'], {})).toEqual({ type: 'login', provider: 'anthropic' })
    expect(parseAcpArgs(['--help'], {})).toEqual({ type: 'help' })
    expect(() => parseAcpArgs(['--max-tokens', '0'], {})).toThrow(/positive integer/)
    expect(() => parseAcpArgs([], { DSH_PERMISSION_MODE: 'yolo' })).toThrow(/DSH_PERMISSION_MODE/)
    expect(() => parseAcpArgs(['--nope'], {})).toThrow(/nope/)
  })
})
