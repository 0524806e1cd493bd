// Races and statuses of the ACP connection, in process (the real plugin tree, the SDK
// client over an in-memory stream): frames sent back to back reach the agent in one
// go, and the SDK may run their handlers in either order.
import * as acp from '@agentclientprotocol/sdk/unstable'
import { defineTool } from '@dsh/core'
import { z } from 'zod'
import { afterEach, describe, expect, it } from 'vitest'
import { editTool, harness, rawPeer, shTool, todoTool, until, updatesOf, type Harness, type RawPeer } from './harness.js'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

/** A tool that takes a while to stop once aborted (a close waits for it). */
const slowStop = defineTool({
  name: 'slow_stop', description: 'Waits until aborted, then takes 300 ms to stop.',
  parameters: z.object({}),
  async execute(_args, call) {
    await new Promise((resolve) => { if (call.signal.aborted) resolve(undefined); else call.signal.addEventListener('abort', resolve, { once: true }) })
    await new Promise((r) => setTimeout(r, 300))
    return 'stopped'
  },
  output: { render: (v: string) => v },
})

const text = (t: string) => [{ type: 'text' as const, text: t }]
const prompt = (h: Harness, sessionId: string, t: string) => h.agent.request('session/prompt', { sessionId, prompt: text(t) })
const userTexts = (h: Harness, sessionId: string) => h.root.sessions.get(sessionId)!.events
  .filter((e) => e.type === 'user/message').map((e) => ((e.data as { content: { text: string }[] }).content[0]!.text))
const statuses = (h: Harness, sessionId: string, callId: string) => updatesOf(h, sessionId)
  .filter((u) => (u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update') && u.toolCallId === callId && u.status)
  .map((u) => (u as { status: string }).status)

async function peerWithSession(h: Harness): Promise<{ peer: RawPeer; sessionId: string }> {
  const peer = rawPeer(h)
  peer.send({ id: 1, method: 'initialize', params: { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} } })
  await peer.response(1)
  peer.send({ id: 2, method: 'session/new', params: { cwd: h.cwd, mcpServers: [] } })
  const sessionId = ((await peer.response(2)).result as { sessionId: string }).sessionId
  return { peer, sessionId }
}
const promptFrame = (id: number, sessionId: string, t: string) => ({ id, method: 'session/prompt', params: { sessionId, prompt: text(t) } })
const cancelFrame = (sessionId: string) => ({ method: 'session/cancel', params: { sessionId } })
const stopOf = async (peer: RawPeer, id: number) => ((await peer.response(id)).result as { stopReason?: string } | undefined)?.stopReason

describe('ACP races: a cancel and the prompt after it, in one read', () => {
  it('with nothing running: the prompt after the cancel runs and its message is kept', async () => {
    h = await harness({ script: [{ text: 'answered' }] })
    const { peer, sessionId } = await peerWithSession(h)
    peer.send(cancelFrame(sessionId), promptFrame(3, sessionId, 'after the cancel'))
    expect(await stopOf(peer, 3)).toBe('end_turn')
    expect(userTexts(h, sessionId)).toEqual(['after the cancel'])
    await peer.close()
  })

  it('while a turn runs: the running prompt is cancelled, the one after the cancel runs', async () => {
    h = await harness({ script: [{ fault: 'stall' }, { text: 'second answer' }] })
    const { peer, sessionId } = await peerWithSession(h)
    peer.send(promptFrame(3, sessionId, 'one'))
    await until(() => h!.model.requests.length === 1)
    peer.send(cancelFrame(sessionId), promptFrame(4, sessionId, 'two'))
    expect(await stopOf(peer, 3)).toBe('cancelled')
    expect(await stopOf(peer, 4)).toBe('end_turn')
    expect(userTexts(h, sessionId)).toEqual(['one', 'two'])
    await peer.close()
  })

  it('prompts read before the cancel are cancelled, the one after it runs', async () => {
    h = await harness({ script: [{ fault: 'stall' }, { text: 'third' }] })
    const { peer, sessionId } = await peerWithSession(h)
    peer.send(promptFrame(3, sessionId, 'one'))
    await until(() => h!.model.requests.length === 1)
    peer.send(promptFrame(4, sessionId, 'two'), cancelFrame(sessionId), promptFrame(5, sessionId, 'three'))
    expect([await stopOf(peer, 3), await stopOf(peer, 4), await stopOf(peer, 5)]).toEqual(['cancelled', 'cancelled', 'end_turn'])
    expect(userTexts(h, sessionId)).toEqual(['one', 'three'])
    await peer.close()
  })
})

describe('ACP races: session/close and an open of the same id, in one read', () => {
  async function storedSession(h: Harness): Promise<{ peer: RawPeer; sessionId: string }> {
    const { peer, sessionId } = await peerWithSession(h)
    peer.send(promptFrame(3, sessionId, 'first'))
    expect(await stopOf(peer, 3)).toBe('end_turn')
    return { peer, sessionId }
  }
  const loadFrame = (id: number, sessionId: string) => ({ id, method: 'session/load', params: { sessionId, cwd: h!.cwd, mcpServers: [] } })
  const closeFrame = (id: number, sessionId: string) => ({ id, method: 'session/close', params: { sessionId } })
  const errorOf = async (peer: RawPeer, id: number) => ((await peer.response(id)).error as { code: number; message: string } | undefined)

  it('close during a turn, then load: the session answers the next prompt', async () => {
    h = await harness({ script: [{ text: 'one' }, { fault: 'stall' }, { text: 'two' }] })
    const { peer, sessionId } = await storedSession(h)
    peer.send(promptFrame(30, sessionId, 'hang'))
    await until(() => h!.model.requests.length === 2)
    peer.send(closeFrame(4, sessionId), loadFrame(5, sessionId))
    expect(await stopOf(peer, 30)).toBe('cancelled')
    expect(await errorOf(peer, 4)).toBeUndefined()
    expect(await errorOf(peer, 5)).toBeUndefined()
    peer.send(promptFrame(6, sessionId, 'after'))
    expect(await errorOf(peer, 6)).toBeUndefined()
    expect(await stopOf(peer, 6)).toBe('end_turn')
    expect(h.root.sessions.get(sessionId)?.closed).toBe(false)
    await peer.close()
  })

  it('a load that arrives while a close waits for the turn to stop: the session answers the next prompt', async () => {
    h = await harness({
      script: [{ text: 'one' }, { toolCalls: [{ id: 's1', name: 'slow_stop', arguments: {} }] }, { text: 'two' }],
      tools: [shTool, editTool, todoTool, slowStop],
    })
    const { peer, sessionId } = await storedSession(h)
    peer.send(promptFrame(30, sessionId, 'hang'))
    await until(() => h!.root.sessions.get(sessionId)!.events.some((e) => e.type === 'tool/call'))
    peer.send(closeFrame(4, sessionId))
    await new Promise((r) => setTimeout(r, 50))
    peer.send(loadFrame(5, sessionId))
    expect(await errorOf(peer, 4)).toBeUndefined()
    expect(await errorOf(peer, 5)).toBeUndefined()
    peer.send(promptFrame(6, sessionId, 'after'))
    expect(await errorOf(peer, 6)).toBeUndefined()
    expect(await stopOf(peer, 6)).toBe('end_turn')
    await peer.close()
  })

  it('load then close of a closed session: the close wins and the next prompt reopens it', async () => {
    h = await harness({ script: [{ text: 'one' }, { text: 'two' }] })
    const { peer, sessionId } = await storedSession(h)
    peer.send(closeFrame(4, sessionId))
    await peer.response(4)
    peer.send(loadFrame(5, sessionId), closeFrame(6, sessionId))
    expect(await errorOf(peer, 5)).toBeUndefined()
    expect(await errorOf(peer, 6)).toBeUndefined()
    peer.send(promptFrame(7, sessionId, 'after'))
    expect(await errorOf(peer, 7)).toBeUndefined()
    expect(await stopOf(peer, 7)).toBe('end_turn')
    await peer.close()
  })

  it('close during a turn, then prompt: neither answers SESSION_CLOSED, and the next prompt runs', async () => {
    h = await harness({ script: [{ text: 'one' }, { fault: 'stall' }, { text: 'two' }, { text: 'three' }] })
    const { peer, sessionId } = await storedSession(h)
    peer.send(promptFrame(30, sessionId, 'hang'))
    await until(() => h!.model.requests.length === 2)
    peer.send(closeFrame(4, sessionId), promptFrame(5, sessionId, 'racing'))
    expect(await stopOf(peer, 30)).toBe('cancelled')
    for (const id of [4, 5]) expect((await errorOf(peer, id))?.message ?? '').not.toContain('SESSION_CLOSED')
    peer.send(promptFrame(6, sessionId, 'after'))
    expect(await errorOf(peer, 6)).toBeUndefined()
    expect(await stopOf(peer, 6)).toBe('end_turn')
    await peer.close()
  })
})

describe('ACP tool call statuses', () => {
  it('a call that asks from its body is pending while the dialog is open, in_progress once allowed', async () => {
    let atDialog: string[] = []
    h = await harness({
      script: [{ toolCalls: [{ id: 'e1', name: 'sh', arguments: { command: 'curl x', escalate: true, lines: ['ok'] } }] }, { text: 'done' }],
      permission: (request) => {
        atDialog = statuses(h!, request.sessionId, 'e1')
        return { outcome: { outcome: 'selected', optionId: 'allow-once' } }
      },
    })
    await h.initialize()
    const { sessionId } = await h.newSession()
    expect(await prompt(h, sessionId, 'go')).toMatchObject({ stopReason: 'end_turn' })
    expect(atDialog.at(-1)).toBe('pending')
    expect(statuses(h, sessionId, 'e1')).toEqual(['pending', 'in_progress', 'pending', 'in_progress', 'in_progress', 'completed'])
  })

  it('a rejected call never shows in_progress again after the dialog', async () => {
    h = await harness({
      script: [{ toolCalls: [{ id: 'e2', name: 'sh', arguments: { command: 'curl x', escalate: true } }] }, { text: 'done' }],
      permission: () => ({ outcome: { outcome: 'selected', optionId: 'reject' } }),
    })
    await h.initialize()
    const { sessionId } = await h.newSession()
    await prompt(h, sessionId, 'go')
    expect(statuses(h, sessionId, 'e2')).toEqual(['pending', 'in_progress', 'pending', 'failed'])
  })

  it('a cancelled call gets a final failed status before the cancelled reply', async () => {
    h = await harness({ script: [{ toolCalls: [{ id: 'w1', name: 'sh', arguments: { command: 'sleep', wait: true, lines: ['started'] } }] }] })
    await h.initialize({ _meta: { terminal_output: true } })
    const { sessionId } = await h.newSession()
    const running = prompt(h, sessionId, 'go')
    await until(() => updatesOf(h!, sessionId).some((u) => (u._meta as { terminal_output?: unknown } | undefined)?.terminal_output))
    await h.agent.notify('session/cancel', { sessionId })
    expect(await running).toEqual({ stopReason: 'cancelled' })
    expect(statuses(h, sessionId, 'w1').at(-1)).toBe('failed')
    const final = updatesOf(h, sessionId).filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'w1').at(-1)!
    expect(final).toEqual({ sessionUpdate: 'tool_call_update', toolCallId: 'w1', status: 'failed' })
  })
})
