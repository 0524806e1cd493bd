import { toolSchema, describeIssues } from '@dsh/core'
import { describe, expect, test } from 'vitest'
import { blockToContent, resultToValue } from '../src/content.js'
import { mcpToolName, sanitizeName } from '../src/names.js'
import { mcpGate } from '../src/policy.js'
import { modelSchema, toolParameters } from '../src/schema.js'

describe('tool names', () => {
  test('mcp__<server>__<tool>, sanitized to [a-zA-Z0-9_-]', () => {
    expect(mcpToolName('fx', 'echo')).toBe('mcp__fx__echo')
    expect(mcpToolName('my server', 'files.read/v2')).toBe('mcp__my_server__files_read_v2')
    expect(sanitizeName('')).toBe('_')
  })

  test('long names are cut to 64 characters with a stable hash; collisions get distinct names', () => {
    const long = mcpToolName('server', 'x'.repeat(100))
    expect(long).toHaveLength(64)
    expect(long).toMatch(/^mcp__server__x+_[0-9a-f]{8}$/)
    expect(mcpToolName('server', 'x'.repeat(100))).toBe(long)
    expect(mcpToolName('server', 'x'.repeat(101))).not.toBe(long)

    const first = mcpToolName('s', 'a.b')
    const second = mcpToolName('s', 'a_b', new Set([first]))
    expect(first).toBe('mcp__s__a_b')
    expect(second).toMatch(/^mcp__s__a_b_[0-9a-f]{8}$/)
  })
})

describe('content', () => {
  test('each MCP block kind', () => {
    expect(blockToContent({ type: 'audio', mimeType: 'audio/wav', data: 'AAAA' })).toEqual([{ type: 'text', text: '[audio (audio/wav, 3 bytes) not shown]' }])
    expect(blockToContent({ type: 'resource', resource: { uri: 'file:///a.png', mimeType: 'image/png', blob: 'iVBO' } })).toEqual([
      { type: 'text', text: 'Resource file:///a.png:' }, { type: 'image', mimeType: 'image/png', data: 'iVBO' },
    ])
    expect(blockToContent({ type: 'resource', resource: { uri: 'file:///a.bin', blob: 'AAAAAA==' } })).toEqual([
      { type: 'text', text: '[resource file:///a.bin (application/octet-stream, 4 bytes of binary data) not shown]' },
    ])
    expect(blockToContent({ type: 'resource_link', uri: 'https://x.test/doc', name: 'doc', description: 'the doc' })).toEqual([
      { type: 'text', text: '[resource link: https://x.test/doc "doc" (the doc)]' },
    ])
  })

  test('structured content and legacy results', () => {
    expect(resultToValue({ content: [], structuredContent: { n: 1 } })).toEqual({ content: [{ type: 'text', text: '{"n":1}' }], isError: false })
    expect(resultToValue({ toolResult: [1, 2] })).toEqual({ content: [{ type: 'text', text: '[1,2]' }], isError: false })
    expect(resultToValue({ content: [], isError: true })).toEqual({ content: [], isError: true })
  })
})

describe('parameters', () => {
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: {
      url: { type: 'string', format: 'uri', description: 'Where' },
      mode: { $ref: '#/$defs/Mode' },
      when: { if: { type: 'string' }, then: { minLength: 2 } },
    },
    required: ['url'],
    $defs: { Mode: { enum: ['fast', 'slow'] } },
  }

  test('the model sees the server schema itself (no round trip through zod)', () => {
    const parameters = toolParameters(schema)
    const { $schema: _drop, ...rest } = schema
    expect(toolSchema({ name: 't', description: 'd', parameters, execute: async () => null, output: { render: () => '' } })).toEqual({
      name: 't', description: 'd', parameters: rest,
    })
    expect(modelSchema({ id: 'urn:x', properties: {} })).toEqual({ type: 'object', properties: {} })
  })

  test('arguments are checked by the JSON Schema itself and passed through unchanged', () => {
    const parameters = toolParameters(schema)
    const args = { url: 'https://x.test', mode: 'fast', when: 'ok', extra: [1] }
    expect(parameters.parse(args)).toBe(args)
    const bad = parameters.safeParse({ url: 'not a uri', mode: 'medium', when: 'x' })
    expect(bad.success).toBe(false)
    expect(describeIssues(bad.error!)).toBe(
      '(root): arguments/url must match format "uri", arguments/mode must be equal to one of the allowed values, arguments/when must NOT have fewer than 2 characters, arguments/when must match "then" schema',
    )
    expect(describeIssues(parameters.safeParse([1]).error!)).toBe('(root): arguments must be a JSON object')
  })

  test('a schema the validator cannot compile still shows as sent and only requires an object', () => {
    const broken = { type: 'object', properties: { a: { $ref: '#/nowhere' } } }
    const parameters = toolParameters(broken)
    expect(parameters.safeParse({ a: 1 }).success).toBe(true)
    expect(parameters.safeParse('x').success).toBe(false)
    expect(toolSchema({ name: 't', description: 'd', parameters, execute: async () => null, output: { render: () => '' } }).parameters).toEqual(broken)
  })
})

describe('mcpGate: the permission preset for MCP tools', () => {
  const base = { server: 's', tool: 't', trusted: false }
  const decide = (preset: string, annotations: Record<string, boolean> | undefined, trusted = false) =>
    mcpGate({ ...base, preset, annotations, trusted }).action

  test.each([
    ['read-only', undefined, 'ask'],
    ['read-only', { readOnlyHint: false }, 'ask'],
    ['read-only', { destructiveHint: false }, 'ask'],
    ['read-only', { readOnlyHint: true }, 'allow'],
    ['workspace-write', undefined, 'allow'],
    ['workspace-write', { destructiveHint: false }, 'allow'],
    ['workspace-write', { destructiveHint: true }, 'ask'],
    ['workspace-write', { readOnlyHint: true, destructiveHint: true }, 'allow'],
    ['danger-full-access', { destructiveHint: true }, 'allow'],
    ['no-such-preset', { readOnlyHint: true }, 'ask'],
  ] as const)('%s with %o → %s', (preset, annotations, action) => {
    expect(decide(preset, annotations)).toBe(action)
  })

  test('a trusted server is allowed under every preset', () => {
    for (const preset of ['read-only', 'workspace-write', 'no-such-preset']) expect(decide(preset, { destructiveHint: true }, true)).toBe('allow')
  })
})
