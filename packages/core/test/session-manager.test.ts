import { describe, expect, it } from 'vitest'
import { Context } from '@deepseek-ai/cordis'
import { isDshError, SESSION_FORMAT_VERSION } from '@dsh/protocol'
import type { SessionEvent } from '@dsh/protocol'
import * as memoryStore from '../src/plugins/memory-store.js'
import * as sessions from '../src/plugins/sessions.js'
import { INTERRUPTED_RESULT_TEXT } from '../src/session/repair.js'
import type { Session } from '../src/session/session.js'

async function setup() {
  const root = new Context()
  await root.plugin(memoryStore, {})
  await root.plugin(sessions, {})
  const seen: [string, SessionEvent][] = []
  root.on('session/event', (session, event) => { seen.push([session.id, event]) })
  return { root, seen }
}

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; hint?: string }> {
  try {
    await promise
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a rejection')
}

const strip = (events: readonly SessionEvent[]) => events.map(({ type, seq, data }) => ({ type, seq, data }))

describe('SessionManager', () => {
  it('creates a session, emits every append, lists it, and unlocks on close', async () => {
    const { root, seen } = await setup()
    const session = await root.sessions.create({ cwd: '/proj', parent: { id: 'p', callId: 'c' } })
    expect(session.header).toEqual({
      format: 'dsh-session', version: SESSION_FORMAT_VERSION, id: session.id, created: session.header.created, cwd: '/proj', parent: { id: 'p', callId: 'c' },
    })
    expect(root.sessions.get(session.id)).toBe(session)
    expect(await root.sessionStore.isLocked(session.id)).toBe(true)
    const event = session.append('session/title', { title: 'Fix tests' }, { ignorable: true })
    expect(seen).toEqual([[session.id, event]])
    await session.flush()
    expect(await root.sessions.list({ cwd: '/proj' })).toEqual([{
      id: session.id, cwd: '/proj', title: 'Fix tests', created: session.header.created, updatedAt: expect.any(Number) as number,
      parent: { id: 'p', callId: 'c' }, events: 1,
    }])
    expect(await root.sessions.list({ cwd: '/elsewhere' })).toEqual([])
    // A failing listener does not fail the append.
    root.on('session/event', () => { throw new Error('listener bug') })
    const after = session.append('notice', { level: 'info', message: 'still logged' })
    expect(session.last('notice')).toBe(after)
    expect(seen.at(-1)).toEqual([session.id, after])
    await session.close()
    expect(root.sessions.get(session.id)).toBeUndefined()
    expect(await root.sessionStore.isLocked(session.id)).toBe(false)
    // Reopening gives a new Session over the stored log.
    const again = await root.sessions.open(session.id)
    expect(again).not.toBe(session)
    expect(strip(again.events)).toEqual(strip(session.events))
    expect(await root.sessions.open(session.id)).toBe(again)
    await root.fiber.dispose()
  })

  it('refuses a second writer through the store with SESSION_LOCKED and rejects bad ids', async () => {
    const { root } = await setup()
    const session = await root.sessions.create({ cwd: '/' })
    const error = await rejection(root.sessionStore.open(session.id))
    expect(error.code).toBe('SESSION_LOCKED')
    expect(error.message).toContain(session.id)
    expect((await rejection(root.sessions.create({ cwd: '/', id: '../escape' }))).code).toBe('INVALID_SESSION_ID')
    expect((await rejection(root.sessions.create({ cwd: '/', id: session.id }))).code).toBe('SESSION_EXISTS')
    expect((await rejection(root.sessions.open('nope'))).code).toBe('SESSION_NOT_FOUND')
    await root.fiber.dispose()
  })

  it('open repairs what a crash left open, flushes the repairs and emits them', async () => {
    const { root, seen } = await setup()
    // A writer that stopped after logging the call: its durable events are in the store.
    const header = { format: 'dsh-session' as const, version: 1, id: 'crashed', created: 5, cwd: '/w' }
    const sink = await root.sessionStore.create(header)
    const durable: SessionEvent[] = [
      { type: 'turn/start', seq: 0, time: 1, data: { turn: 1 } },
      { type: 'user/message', seq: 1, time: 2, data: { id: 'u', content: [{ type: 'text', text: 'go' }] } },
      { type: 'step/start', seq: 2, time: 3, data: { turn: 1, step: 1 } },
      { type: 'assistant/message', seq: 3, time: 4, data: { id: 'a', content: [{ type: 'tool-call', id: 'c1', name: 'bash', arguments: '{}' }], finish: 'tool-calls' } },
      { type: 'tool/call', seq: 4, time: 5, data: { callId: 'c1', name: 'bash', args: {} } },
    ]
    for (const event of durable) sink.write(event)
    await sink.close()

    const session = await root.sessions.open('crashed')
    const repairs = [
      { type: 'tool/result', seq: 5, data: { callId: 'c1', name: 'bash', content: [{ type: 'text', text: INTERRUPTED_RESULT_TEXT }], isError: true, synthetic: true } },
      { type: 'step/end', seq: 6, data: { turn: 1, step: 1 } },
      { type: 'turn/end', seq: 7, data: { turn: 1, reason: 'interrupted' } },
    ]
    expect(strip(session.events)).toEqual([...strip(durable), ...repairs])
    expect(seen.map(([id, e]) => [id, e.seq])).toEqual([['crashed', 5], ['crashed', 6], ['crashed', 7]])
    expect(session.deriveMessages()).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'tool-call', id: 'c1', name: 'bash', arguments: '{}' }] },
      { role: 'tool', callId: 'c1', name: 'bash', content: [{ type: 'text', text: INTERRUPTED_RESULT_TEXT }], isError: true },
    ])
    // The repairs are durable: the store holds them without a close.
    expect(strip((await root.sessionStore.read('crashed')).events)).toEqual(strip(session.events))
    await root.fiber.dispose()
  })

  it('refuses a log with an unknown non-ignorable event (and unlocks), reads it once the type is defined', async () => {
    const { root } = await setup()
    const session = await root.sessions.create({ cwd: '/', id: 'plugin-log' })
    session.append('todo/write', { items: [] })
    session.append('future/ignorable', { x: 1 }, { ignorable: true })
    await session.close()

    const error = await rejection(root.sessions.open('plugin-log'))
    expect(error.code).toBe('UNSUPPORTED_EVENT')
    expect(error.message).toContain('"todo/write" (seq 0)')
    expect(await root.sessionStore.isLocked('plugin-log')).toBe(false)

    const fiber = await root.plugin({ name: 'todo', inject: ['sessions'], apply: (ctx: Context) => { ctx.sessions.defineEventType('todo/write') } })
    expect(root.sessions.knownTypes().has('todo/write')).toBe(true)
    const opened = await root.sessions.open('plugin-log')
    expect(opened.events.map((e) => e.type)).toEqual(['todo/write', 'future/ignorable'])
    await opened.close()
    await fiber.dispose()
    expect(root.sessions.knownTypes().has('todo/write')).toBe(false)
    expect((await rejection(root.sessions.open('plugin-log'))).code).toBe('UNSUPPORTED_EVENT')
    await root.fiber.dispose()
  })

  it('forks up to a seq: new id, parent link, copied events, closed like a crash; the source is untouched', async () => {
    const { root } = await setup()
    const source = await root.sessions.create({ cwd: '/src' })
    source.append('turn/start', { turn: 1 })
    source.append('user/message', { id: 'u', content: [{ type: 'text', text: 'hi' }] })
    source.append('step/start', { turn: 1, step: 1 })
    source.append('assistant/message', { id: 'a', content: [{ type: 'text', text: 'yo' }], finish: 'stop' })
    source.append('step/end', { turn: 1, step: 1 })
    // Not flushed: fork reads the live log of an open session.
    const fork = await root.sessions.fork(source.id, { uptoSeq: 3, cwd: '/elsewhere' })
    expect(fork.id).not.toBe(source.id)
    expect(fork.header).toEqual({ format: 'dsh-session', version: 1, id: fork.id, created: fork.header.created, cwd: '/elsewhere', parent: { id: source.id, fork: true } })
    expect(strip(fork.events)).toEqual([
      ...strip(source.events.slice(0, 4)),
      { type: 'step/end', seq: 4, data: { turn: 1, step: 1 } },
      { type: 'turn/end', seq: 5, data: { turn: 1, reason: 'interrupted' } },
    ])
    expect(fork.events[1]!.time).toBe(source.events[1]!.time)
    expect(source.events).toHaveLength(5)
    expect(strip((await root.sessionStore.read(fork.id)).events)).toEqual(strip(fork.events))

    await source.close()
    const whole = await root.sessions.fork(source.id) // from the store now
    expect(strip(whole.events)).toEqual([...strip(source.events), { type: 'turn/end', seq: 5, data: { turn: 1, reason: 'interrupted' } }])
    expect(whole.cwd).toBe('/src')
    expect((await rejection(root.sessions.fork(source.id, { uptoSeq: -1 }))).code).toBe('INVALID_ARGUMENT')
    await root.fiber.dispose()
  })

  it('closes (flushes and unlocks) every open session when the plugin is disposed', async () => {
    const root = new Context()
    await root.plugin(memoryStore, {})
    const fiber = await root.plugin(sessions, {})
    const store = root.sessionStore
    const opened: Session[] = [await root.sessions.create({ cwd: '/' }), await root.sessions.create({ cwd: '/' })]
    opened[0]!.append('turn/start', { turn: 1 })
    await fiber.dispose()
    expect(opened.map((s) => s.closed)).toEqual([true, true])
    expect(await Promise.all(opened.map((s) => store.isLocked(s.id)))).toEqual([false, false])
    expect((await store.read(opened[0]!.id)).events.map((e) => e.type)).toEqual(['turn/start'])
    expect(isDshError(await rejection(Promise.resolve().then(() => opened[1]!.append('turn/start', { turn: 1 }))), 'SESSION_CLOSED')).toBe(true)
    await root.fiber.dispose()
  })
})
