import { describe, expect, it } from 'vitest'
import { Config, ServerSpec } from '../src/config.js'

const issues = (value: unknown) => (ServerSpec.safeParse(value).error?.issues ?? []).map((i) => `${i.path.join('.') || '(entry)'}: ${i.message}`)

describe('MCP server entries fail closed', () => {
  it('an unknown key is an error naming it and the accepted keys', () => {
    expect(issues({ command: 'x', enviroment: { A: '1' } })).toEqual([
      '(entry): unknown key "enviroment" in a server entry (stdio: type, command, args, env, cwd, timeoutMs, trusted, connectTimeoutMs; http: type, url, headers, timeoutMs, trusted, connectTimeoutMs)',
    ])
    expect(issues({ type: 'http', url: 'http://127.0.0.1:1/mcp', timeout: 5 })[0]).toMatch(/^\(entry\): unknown key "timeout" in a server entry/)
  })

  it('a misspelled required key names the missing key, not just "Invalid input"', () => {
    expect(issues({ comand: 'x' })).toEqual([
      'command: Invalid input: expected string, received undefined',
      expect.stringMatching(/^\(entry\): unknown key "comand"/),
    ])
    expect(issues({ type: 'htp', url: 'x' })[0]).toMatch(/^type: /)
  })

  it('well-formed entries still parse, a stdio entry may leave out type', () => {
    expect(Config.parse({ servers: { a: { command: 'x' }, b: { type: 'http', url: 'http://127.0.0.1:1/mcp' } } }).servers).toEqual({
      a: { type: 'stdio', command: 'x', args: [], env: {}, trusted: false },
      b: { type: 'http', url: 'http://127.0.0.1:1/mcp', headers: {}, trusted: false },
    })
  })
})
