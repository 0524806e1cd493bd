// Real built-in tools through `dsh --profile acp` (built): what an editor's cards show for
// a write over an existing file (live and on load) and for a sandboxed command killed by
// a signal.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type AcpProcess, sessionUpdates, useAcpSuite } from './helpers/acp.js'

const suite = useAcpSuite()

const finalOf = (p: AcpProcess, sessionId: string, callId: string) => sessionUpdates(p, sessionId)
  .filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === callId).at(-1) as Record<string, unknown> | undefined

describe('dsh --profile acp: built-in tool cards', () => {
  it('write over an existing file sends the replaced content as oldText, live and on load', async () => {
    const file = join(suite.setup.cwd, 'notes.txt')
    writeFileSync(file, 'old line\n')
    const p = suite.start([
      { toolCalls: [{ id: 'r1', name: 'read', arguments: { path: 'notes.txt' } }] },
      { toolCalls: [{ id: 'w1', name: 'write', arguments: { path: 'notes.txt', content: 'new line\n' } }] },
      { text: 'rewritten' },
    ])
    await p.initialize()
    const { sessionId } = await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [] })
    expect(await p.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'rewrite it' }] })).toMatchObject({ stopReason: 'end_turn' })
    expect(readFileSync(file, 'utf8')).toBe('new line\n')
    const diff = { type: 'diff', path: file, oldText: 'old line\n', newText: 'new line\n' }
    expect(finalOf(p, sessionId, 'w1')).toMatchObject({ status: 'completed', content: [diff] })
    await p.agent.request('session/close', { sessionId })
    const before = p.updates.length
    await p.agent.request('session/load', { sessionId, cwd: suite.setup.cwd, mcpServers: [] })
    const replayed = p.updates.slice(before).filter((u) => u.sessionId === sessionId).map((u) => u.update)
      .filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'w1').at(-1)
    expect(replayed).toMatchObject({ status: 'completed', content: [diff] })
  })

  it('a sandboxed command killed by a signal shows the signal, not exit 143', async () => {
    const p = suite.start([{ toolCalls: [{ id: 'k1', name: 'bash', arguments: { command: 'echo before; kill -TERM $$' } }] }, { text: 'done' }])
    await p.initialize({ _meta: { terminal_output: true } })
    const { sessionId } = await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [] })
    await p.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run it' }] })
    expect(finalOf(p, sessionId, 'k1')).toMatchObject({
      status: 'completed',
      rawOutput: { content: [{ type: 'text', text: 'before\n[killed by signal: SIGTERM]' }] },
      _meta: { terminal_exit: { terminal_id: 'dsh-term:k1', signal: 'SIGTERM' } },
    })
  })
})
