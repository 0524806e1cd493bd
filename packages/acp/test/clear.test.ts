// `/clear` over ACP: like the host's session/command, a new session in the same workspace
// with the same permission preset, open on this connection; its id is in the reply's
// `_meta.newSessionId` and in the message the editor shows.
import { afterEach, describe, expect, it } from 'vitest'
import { harness, updatesOf, type Harness } from './harness.js'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

const say = (sessionId: string, text: string) => h!.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })

describe('ACP /clear', () => {
  it('opens a new session in the same workspace and preset, tells the editor its id, and the new session takes prompts', async () => {
    h = await harness({ commands: true, script: [{ text: 'fresh answer' }] })
    await h.initialize()
    const { sessionId } = await h.newSession()
    await h.agent.request('session/set_mode', { sessionId, modeId: 'read-only' })
    const reply = await say(sessionId, '/clear')
    expect(reply.stopReason).toBe('end_turn')
    const newId = (reply._meta as { newSessionId?: string } | undefined)?.newSessionId
    expect(typeof newId).toBe('string')
    expect(newId).not.toBe(sessionId)
    const fresh = h.root.sessions.get(newId!)!
    expect(fresh.cwd).toBe(h.cwd)
    expect(h.root.permission.current(fresh).id).toBe('read-only')
    const shown = JSON.stringify(updatesOf(h, sessionId).filter((u) => u.sessionUpdate === 'agent_message_chunk'))
    expect(shown).toContain(`New session: ${newId}`)
    expect(h.model.requests).toHaveLength(0)
    expect(await say(newId!, 'hello')).toMatchObject({ stopReason: 'end_turn' })
    expect(h.model.requests).toHaveLength(1)
    // the source session is untouched and stays open
    expect(h.root.sessions.get(sessionId)!.events.some((e) => e.type === 'user/message')).toBe(false)
  })
})
