// Approval questions are routed per session (ctx.approval.setSessionAnswerer): another
// surface in the same tree setting its own answerer takes none of ACP's questions.
import type { ApprovalOutcome } from '@dsh/protocol'
import { afterEach, describe, expect, it } from 'vitest'
import { harness, type Harness } from './harness.js'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

const escalate = { toolCalls: [{ id: 'e1', name: 'sh', arguments: { command: 'curl x', escalate: true, lines: ['fetched'] } }] }

describe('ACP approvals, per session', () => {
  it('a process-wide answerer set by another surface after ACP started does not take the ACP session\'s question', async () => {
    h = await harness({ script: [escalate, { text: 'done' }] })
    const stolen: string[] = []
    h.root.approval.setAnswerer(async (session): Promise<ApprovalOutcome> => {
      stolen.push(session.id)
      return 'reject'
    })
    await h.initialize()
    const { sessionId } = await h.newSession()
    expect(await h.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] })).toMatchObject({ stopReason: 'end_turn' })
    expect(stolen).toEqual([])
    expect(h.permissions.map((p) => p.toolCall.toolCallId)).toEqual(['e1'])
    const result = h.root.sessions.get(sessionId)!.events.find((e) => e.type === 'tool/result')!
    expect(JSON.stringify(result.data)).toContain('fetched')
  })

  it('after the ACP session is closed its answerer is gone: the session id no longer routes to the connection', async () => {
    h = await harness({ script: [] })
    await h.initialize()
    const { sessionId } = await h.newSession()
    const session = h.root.sessions.get(sessionId)!
    expect(h.root.approval.canAskFor(session)).toBe(true)
    await h.agent.request('session/close', { sessionId })
    expect(h.root.approval.canAskFor(session)).toBe(false)
  })
})
