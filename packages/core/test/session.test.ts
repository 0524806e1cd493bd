import { describe, expect, it } from 'vitest'
import { isDshError } from '@dsh/protocol'
import type { SessionEvent, SessionHeader } from '@dsh/protocol'
import { Session } from '../src/session/session.js'
import type { SessionSink } from '../src/session/session.js'
import { isValidSessionId, newSessionId } from '../src/session/ids.js'

const header: SessionHeader = { format: 'dsh-session', version: 1, id: 's1', created: 1, cwd: '/w' }

/** A sink that records what reached it and whether it was flushed/closed. */
function recordingSink() {
  const written: SessionEvent[] = []
  const flushed: number[] = []
  const state = { closed: 0 }
  const sink: SessionSink = {
    write: (event) => { written.push(event) },
    flush: async () => { flushed.push(written.length) },
    close: async () => { state.closed++ },
  }
  return { sink, written, flushed, state }
}

function expectDshError(fn: () => unknown, code: string, messageParts: string[]): void {
  let thrown: unknown
  try { fn() } catch (error) { thrown = error }
  expect(isDshError(thrown, code), `expected ${code}, got ${String(thrown)}`).toBe(true)
  for (const part of messageParts) expect((thrown as Error).message).toContain(part)
}

describe('Session.append', () => {
  it('assigns seq and time, copies and deep-freezes data, writes to the sink and calls onAppend', () => {
    const { sink, written } = recordingSink()
    const seen: SessionEvent[] = []
    const session = new Session(header, [], sink, (e) => seen.push(e))
    const content = [{ type: 'text' as const, text: 'hi' }]
    const before = Date.now()
    const event = session.append('user/message', { id: 'u1', content })
    expect(event).toEqual({ type: 'user/message', seq: 0, time: event.time, data: { id: 'u1', content: [{ type: 'text', text: 'hi' }] } })
    expect(event.time).toBeGreaterThanOrEqual(before)
    expect(Object.isFrozen(event)).toBe(true)
    expect(Object.isFrozen(event.data)).toBe(true)
    expect(Object.isFrozen(event.data.content[0])).toBe(true)
    // The caller's object is copied, not frozen in place.
    expect(Object.isFrozen(content)).toBe(false)
    content.push({ type: 'text', text: 'later' })
    expect(event.data.content).toHaveLength(1)
    expect(() => { (event.data.content as unknown[]).push(1) }).toThrow(TypeError)

    const chunk = session.append('assistant/chunk', { messageId: 'a', kind: 'text', delta: 'x' }, { ignorable: true })
    expect(chunk).toMatchObject({ type: 'assistant/chunk', seq: 1, ignorable: true })
    expect(session.events).toEqual([event, chunk])
    expect(written).toEqual([event, chunk])
    expect(seen).toEqual([event, chunk])
    expect(session.events.every((e, i) => e.seq === i)).toBe(true)
  })

  it.each([
    ['undefined', { a: { b: undefined } }, '$.data.a.b is undefined'],
    ['NaN', { n: [1, Number.NaN] }, '$.data.n[1] is NaN'],
    ['Infinity', { n: Infinity }, '$.data.n is Infinity'],
    ['BigInt', { big: 10n }, '$.data.big is a BigInt'],
    ['class instance', { when: new Date(0) }, '$.data.when is an instance of Date'],
    ['Map', { m: new Map() }, '$.data.m is an instance of Map'],
    ['function', { f: () => 1 }, '$.data.f is a function'],
  ])('refuses %s with INVALID_EVENT naming the path and the type', (_name, data, path) => {
    const { sink, written } = recordingSink()
    const session = new Session(header, [], sink)
    expectDshError(() => session.append('plugin/thing', data as never), 'INVALID_EVENT', ['"plugin/thing"', path])
    expect(session.events).toEqual([])
    expect(written).toEqual([])
  })

  it('refuses a cycle and an empty type', () => {
    const session = new Session(header, [], recordingSink().sink)
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = cyclic
    expectDshError(() => session.append('x/y', cyclic as never), 'INVALID_EVENT', ['$.data.self is a cycle'])
    expectDshError(() => session.append('', {}), 'INVALID_EVENT', ['non-empty string'])
  })

  it('does not append when the sink throws', () => {
    const sink: SessionSink = { write: () => { throw new Error('disk gone') }, flush: async () => {}, close: async () => {} }
    const session = new Session(header, [], sink)
    expect(() => session.append('turn/start', { turn: 1 })).toThrow('disk gone')
    expect(session.events).toEqual([])
    expect(session.deriveMessages()).toEqual([])
  })
})

describe('Session lifecycle and queries', () => {
  it('freezes loaded events, checks seq, answers last() and keeps derive incremental', () => {
    const loaded: SessionEvent[] = [
      { type: 'turn/start', seq: 0, time: 1, data: { turn: 1 } },
      { type: 'user/message', seq: 1, time: 2, data: { id: 'u1', content: [{ type: 'text', text: 'a' }] } },
    ]
    const session = new Session(header, loaded, recordingSink().sink)
    expect(Object.isFrozen(loaded[1]!.data)).toBe(true)
    expect(Object.isFrozen(session.header)).toBe(true)
    expect(session.cwd).toBe('/w')
    expect(session.last('user/message')).toBe(loaded[1])
    expect(session.last('tool/result')).toBeUndefined()
    const first = session.deriveMessages()
    expect(first).toEqual([{ role: 'user', content: [{ type: 'text', text: 'a' }] }])
    first.push({ role: 'user', content: [] }) // a caller's array is its own
    session.append('user/message', { id: 'u2', content: [{ type: 'text', text: 'b' }] })
    expect(session.last('user/message')?.data.id).toBe('u2')
    expect(session.deriveMessages()).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'a' }] },
      { role: 'user', content: [{ type: 'text', text: 'b' }] },
    ])
  })

  it('refuses a log whose seq is not its index', () => {
    const bad: SessionEvent[] = [{ type: 'turn/start', seq: 1, time: 1, data: { turn: 1 } }]
    expectDshError(() => new Session(header, bad, recordingSink().sink), 'SESSION_CORRUPT', ['event 0 has seq 1'])
  })

  it('flushes through the sink, closes once, then refuses appends with SESSION_CLOSED', async () => {
    const { sink, flushed, state } = recordingSink()
    const session = new Session(header, [], sink)
    session.append('turn/start', { turn: 1 })
    await session.flush()
    expect(flushed).toEqual([1])
    const a = session.close()
    const b = session.close()
    await Promise.all([a, b])
    expect(state.closed).toBe(1)
    expect(session.closed).toBe(true)
    expectDshError(() => session.append('turn/end', { turn: 1, reason: 'completed' }), 'SESSION_CLOSED', ['s1', 'turn/end'])
    await session.flush() // after close: resolves, nothing more to write
    expect(flushed).toEqual([1])
  })
})

describe('session ids', () => {
  it('are unique, sortable by creation and safe as file names', () => {
    const ids = Array.from({ length: 500 }, (_, i) => newSessionId(1_700_000_000_000 + Math.floor(i / 100)))
    expect(new Set(ids).size).toBe(500)
    expect([...ids].sort()).toEqual(ids)
    for (const id of ids) expect(isValidSessionId(id)).toBe(true)
    expect(newSessionId() > ids[ids.length - 1]!).toBe(true)
    for (const bad of ['', '.', '..', '../x', 'a/b', 'a\\b', '-a', 'x'.repeat(129), 'a b']) expect(isValidSessionId(bad)).toBe(false)
  })
})

describe('Session.watchDurable (shown means durable)', () => {
  /** A sink whose flushes complete only when the test releases them. */
  function gatedSink() {
    const written: SessionEvent[] = []
    const durable: SessionEvent[] = []
    const gates: (() => void)[] = []
    const sink: SessionSink = {
      write: (event) => { written.push(event) },
      flush: () => {
        const upto = written.length
        return new Promise<void>((resolve) => gates.push(() => { durable.push(...written.slice(durable.length, upto)); resolve() }))
      },
      close: async () => undefined,
    }
    return { sink, durable, gates }
  }
  const tick = () => new Promise<void>((r) => setImmediate(r))

  it('delivers an event only after the flush that made it durable, each once and in order', async () => {
    const { sink, durable, gates } = gatedSink()
    const session = new Session(header, [], sink)
    const seen: number[] = []
    session.watchDurable((events) => {
      for (const e of events) {
        // the watcher never sees an event the sink has not made durable
        expect(durable.some((d) => d.seq === e.seq)).toBe(true)
        seen.push(e.seq)
      }
    })
    session.append('notice', { level: 'info', message: 'a' })
    session.append('notice', { level: 'info', message: 'b' })
    expect(seen).toEqual([])
    await tick()
    expect(gates).toHaveLength(1) // one flush for the batch of two
    session.append('notice', { level: 'info', message: 'c' })
    gates.shift()!()
    await tick()
    await tick()
    expect(seen).toEqual([0, 1])
    expect(session.durableCount).toBe(2)
    while (gates.length) gates.shift()!()
    await tick()
    expect(seen).toEqual([0, 1, 2])
  })

  it('counts a loaded log as durable and a forked copy as not yet', () => {
    const { sink } = gatedSink()
    const loaded = new Session(header, [{ type: 'notice', seq: 0, time: 1, data: { level: 'info', message: 'x' } }], sink)
    expect(loaded.durableCount).toBe(1)
    const forked = new Session({ ...header, id: 's2' }, [{ type: 'notice', seq: 0, time: 1, data: { level: 'info', message: 'x' } }], sink, undefined, 0)
    expect(forked.durableCount).toBe(0)
  })

  it('schedules no flush while nobody watches, and stops delivering after unsubscribe', async () => {
    const { sink, gates } = gatedSink()
    const session = new Session(header, [], sink)
    session.append('notice', { level: 'info', message: 'a' })
    await tick()
    expect(gates).toHaveLength(0)
    const seen: number[] = []
    const stop = session.watchDurable((events) => seen.push(...events.map((e) => e.seq)))
    await tick()
    expect(gates).toHaveLength(1) // watching flushes what was pending
    stop()
    gates.shift()!()
    await tick()
    expect(seen).toEqual([])
  })
})
