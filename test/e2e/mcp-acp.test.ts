// MCP tools under the permission preset over ACP: the editor is asked, and its answer decides
// what the server does (checked on disk). Against the built `dsh --profile acp`.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from './helpers/dsh.js'
import { useAcpSuite } from './helpers/acp.js'

const suite = useAcpSuite()
const FIXTURE = join(ROOT, 'packages', 'mcp', 'test', 'fixtures', 'server.mjs')

describe('dsh --profile acp: MCP tools and the permission preset', () => {
  it('read-only asks the editor before an unannotated MCP tool runs; allow writes, reject does not', async () => {
    const allowed = join(suite.setup.cwd, 'allowed.txt')
    const refused = join(suite.setup.cwd, 'refused.txt')
    suite.model.setScript([
      { toolCalls: [{ id: 'w1', name: 'mcp__fx__write', arguments: { path: allowed, text: 'yes' } }] },
      { toolCalls: [{ id: 'w2', name: 'mcp__fx__write', arguments: { path: refused, text: 'no' } }] },
      { toolCalls: [{ id: 'a1', name: 'mcp__fx__add', arguments: { a: 1, b: 1 } }] },
      { text: 'done' },
    ])
    const p = suite.start()
    await p.initialize()
    const { sessionId } = await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [{ name: 'fx', command: process.execPath, args: [FIXTURE], env: [] }] })
    await p.agent.request('session/set_mode', { sessionId, modeId: 'read-only' })
    let answered = 0
    p.answer = () => ({ outcome: { outcome: 'selected', optionId: answered++ === 0 ? 'allow-once' : 'reject' } })
    expect(await p.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'write twice' }] })).toMatchObject({ stopReason: 'end_turn' })
    expect(readFileSync(allowed, 'utf8')).toBe('yes')
    expect(existsSync(refused)).toBe(false)
    // two questions (the two writes); the readOnlyHint tool was not asked about
    expect(p.permissions.map((r) => r.toolCall.toolCallId)).toEqual(['w1', 'w2'])
    expect(suite.model.failures).toEqual([])
  })
})
