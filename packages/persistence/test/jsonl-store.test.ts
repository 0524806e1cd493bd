import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Context } from '@deepseek-ai/cordis'
import type { Message } from '@deepseek-ai/cordis'
import type { SessionEvent } from '@dsh/protocol'
import * as sessions from '@dsh/core/sessions'
import * as jsonl from '../src/plugins/jsonl.js'
import { defaultSessionsDir, JsonlSessionStore } from '../src/store.js'
import { tempDir } from './helpers.js'

const cleanups: (() => void | Promise<void>)[] = []
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn()
})

async function setup(dir?: string) {
  const tmp = dir ? { dir, cleanup: () => {} } : tempDir()
  const root = new Context()
  const logged: string[] = []
  root.logger.exporter({ levels: { default: 3 }, export: (m: Message) => { logged.push(m.args.map(String).join(' ')) } })
  await root.plugin(jsonl, { dir: tmp.dir })
  await root.plugin(sessions, {})
  cleanups.push(tmp.cleanup, () => root.fiber.dispose())
  return { root, dir: tmp.dir, logged }
}

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; hint?: string }> {
  try { await promise } catch (error) { return error as Error }
  throw new Error('expected a rejection')
}

const lines = (file: string) => readFileSync(file, 'utf8').split('\n')
const strip = (events: readonly SessionEvent[]) => events.map(({ type, seq, data }) => ({ type, seq, data }))
const header = (id: string, extra = {}) => JSON.stringify({ format: 'dsh-session', version: 1, id, created: 7, cwd: '/w', ...extra })
const ev = (type: string, seq: number, data: unknown) => JSON.stringify({ type, seq, time: 100 + seq, data })

describe('JSONL store: writing', () => {
  it('round-trips a session through the file, U+2028/U+2029 and astral text included', async () => {
    const { root, dir } = await setup()
    const session = await root.sessions.create({ cwd: '/proj', id: 'round' })
    const file = join(dir, 'round.jsonl')
    expect(lines(file)).toEqual([JSON.stringify(session.header), ''])
    const tricky = 'line\u2028sep\u2029para\r\n\ttab "quoted" \\ 🦀 \u0000 end'
    session.append('turn/start', { turn: 1 })
    session.append('user/message', { id: 'u', content: [{ type: 'text', text: tricky }] })
    session.append('assistant/chunk', { messageId: 'a', kind: 'text', delta: tricky }, { ignorable: true })
    session.append('assistant/message', { id: 'a', content: [{ type: 'text', text: tricky }], finish: 'stop' })
    session.append('turn/end', { turn: 1, reason: 'completed' })
    // Buffered until flushed.
    expect(lines(file)).toHaveLength(2)
    await session.flush()
    expect(lines(file).slice(1)).toEqual([...session.events.map((e) => JSON.stringify(e)), ''])
    expect(readFileSync(file, 'utf8')).toContain('\u2028sep\u2029') // raw separators inside a line, not escaped
    const written = session.events
    const messages = session.deriveMessages()
    await session.close()
    expect(existsSync(join(dir, 'round.lock'))).toBe(false)

    const other = await setup(dir)
    const reopened = await other.root.sessions.open('round')
    expect(reopened.header).toEqual(session.header)
    expect(reopened.events).toEqual(written)
    expect(reopened.deriveMessages()).toEqual(messages)
    expect((reopened.events[1]!.data as { content: { text: string }[] }).content[0]!.text).toBe(tricky)
  })

  it('issues one write per flush batch and keeps concurrent flushes in order', async () => {
    const { dir } = tempDir()
    const root = new Context()
    const store = new JsonlSessionStore(root, { dir })
    cleanups.push(() => root.fiber.dispose())
    const sink = await store.create({ format: 'dsh-session', version: 1, id: 'batch', created: 1, cwd: '/' })
    const handle = (sink as unknown as { options: { handle: { write: (...args: unknown[]) => Promise<unknown> } } }).options.handle
    const writes: number[] = []
    const original = handle.write.bind(handle)
    handle.write = (...args: unknown[]) => { writes.push(args[2] as number); return original(...args) }
    for (let i = 0; i < 50; i++) sink.write({ type: 'turn/start', seq: i, time: i, data: { turn: i } })
    await sink.flush()
    expect(writes).toHaveLength(1)
    await sink.flush() // nothing pending: no write
    expect(writes).toHaveLength(1)
    sink.write({ type: 'turn/start', seq: 50, time: 50, data: { turn: 50 } })
    const second = sink.flush()
    sink.write({ type: 'turn/start', seq: 51, time: 51, data: { turn: 51 } })
    const third = sink.flush() // resolves after both events are durable
    await third
    await second
    expect(writes).toHaveLength(2)
    const file = lines(join(dir, 'batch.jsonl'))
    expect(file.slice(1, -1).map((line) => (JSON.parse(line) as { seq: number }).seq)).toEqual(Array.from({ length: 52 }, (_, i) => i))
    expect(writes).toEqual([Buffer.byteLength(file.slice(1, 51).join('\n') + '\n'), Buffer.byteLength(file.slice(51, 53).join('\n') + '\n')])
    await sink.close()
    expect(() => sink.write({ type: 'x', seq: 51, time: 0, data: null })).toThrow(/closed/)
  })

  it('defaults to $DSH_HOME/sessions', () => {
    expect(defaultSessionsDir({ DSH_HOME: '/h' })).toBe('/h/sessions')
    expect(defaultSessionsDir({ HOME: '/x' }).endsWith('/.dsh/sessions')).toBe(true)
  })

  it('an empty DSH_HOME means ~/.dsh, as for the rest of dsh (was ./sessions in the working directory); a relative one is resolved', () => {
    expect(defaultSessionsDir({ DSH_HOME: '' })).toBe(join(homedir(), '.dsh', 'sessions'))
    expect(defaultSessionsDir({ DSH_HOME: 'rel' })).toBe(join(process.cwd(), 'rel', 'sessions'))
  })
})

describe('JSONL store: loading', () => {
  it('drops a torn last line, truncates it from the file, repairs and records a notice', async () => {
    const { root, dir } = await setup()
    const file = join(dir, 'torn.jsonl')
    const good = [header('torn'), ev('turn/start', 0, { turn: 1 }), ev('step/start', 1, { turn: 1, step: 1 })].join('\n') + '\n'
    const torn = '{"type":"assistant/chunk","seq":2,"time":1,"data":{"messageId":"a","kind":"te'
    writeFileSync(file, good + torn)
    const session = await root.sessions.open('torn')
    expect(strip(session.events)).toEqual([
      { type: 'turn/start', seq: 0, data: { turn: 1 } },
      { type: 'step/start', seq: 1, data: { turn: 1, step: 1 } },
      { type: 'step/end', seq: 2, data: { turn: 1, step: 1 } },
      { type: 'turn/end', seq: 3, data: { turn: 1, reason: 'interrupted' } },
      { type: 'notice', seq: 4, data: { level: 'warn', source: 'persistence', message: `dropped a torn last line (${torn.length} bytes) from ${file}: the process stopped while writing it` } },
    ])
    // The torn bytes are gone from disk; what follows them is whole lines.
    const text = readFileSync(file, 'utf8')
    expect(text.startsWith(good)).toBe(true)
    expect(text.slice(good.length).split('\n')).toEqual([...session.events.slice(2).map((e) => JSON.stringify(e)), ''])
  })

  it('drops an unparsable last line even when it ends in a newline', async () => {
    const { root, dir } = await setup()
    writeFileSync(join(dir, 't2.jsonl'), [header('t2'), ev('notice', 0, { level: 'info', message: 'x' }), '{"type":"tu', ''].join('\n'))
    const { events, notices } = await root.sessionStore.read('t2')
    expect(strip(events)).toEqual([{ type: 'notice', seq: 0, data: { level: 'info', message: 'x' } }])
    expect(notices).toEqual([expect.stringContaining('dropped a torn last line (12 bytes)')])
  })

  it('refuses a bad line in the middle with SESSION_CORRUPT naming file and line, and unlocks', async () => {
    const { root, dir } = await setup()
    const file = join(dir, 'bad.jsonl')
    writeFileSync(file, [header('bad'), ev('turn/start', 0, { turn: 1 }), 'not json', ev('turn/end', 2, { turn: 1, reason: 'completed' }), ''].join('\n'))
    const error = await rejection(root.sessions.open('bad'))
    expect(error.code).toBe('SESSION_CORRUPT')
    expect(error.message).toMatch(new RegExp(`^${file}:3: line is not JSON`))
    expect(await root.sessionStore.isLocked('bad')).toBe(false)
    expect(existsSync(join(dir, 'bad.lock'))).toBe(false)

    writeFileSync(file, [header('bad'), ev('turn/start', 0, { turn: 1 }), ev('turn/start', 5, { turn: 2 }), ''].join('\n'))
    expect((await rejection(root.sessions.read('bad'))).message).toBe(`${file}:3: event has seq 5 where 1 was expected`)
  })

  it('refuses a newer format version with a message naming it', async () => {
    const { root, dir } = await setup()
    const file = join(dir, 'future.jsonl')
    writeFileSync(file, JSON.stringify({ format: 'dsh-session', version: 2, id: 'future', created: 1, cwd: '/' }) + '\n')
    const error = await rejection(root.sessions.open('future'))
    expect(error.code).toBe('SESSION_VERSION')
    expect(error.message).toBe(`${file} was written in session format version 2; this dsh reads versions up to 1`)
    expect(error.hint).toContain('upgrade dsh')
    expect(await root.sessionStore.isLocked('future')).toBe(false)
  })

  it('migrates a version-0 file on open: backup kept, file rewritten, notice logged and recorded', async () => {
    const { root, dir, logged } = await setup()
    const file = join(dir, 'old.jsonl')
    const v0 = [
      JSON.stringify({ type: 'user/message', time: 50, data: { id: 'u', content: [{ type: 'text', text: 'hi' }] } }),
      JSON.stringify({ type: 'assistant/message', time: 60, data: { id: 'a', content: [{ type: 'text', text: 'yo' }], finish: 'stop' } }),
      JSON.stringify({ type: 'old/thing', time: 61, data: 1, ignorable: true }),
    ].join('\n') + '\n'
    writeFileSync(file, v0)

    // read() migrates in memory only.
    const read = await root.sessions.read('old')
    expect(read.header).toEqual({ format: 'dsh-session', version: 1, id: 'old', created: 50, cwd: '' })
    expect(read.notices).toEqual([`session old: read ${file} as format version 0 (migrated in memory; the file is rewritten when the session is next opened)`])
    expect(readFileSync(file, 'utf8')).toBe(v0)
    expect(existsSync(`${file}.v0.bak`)).toBe(false)

    const session = await root.sessions.open('old')
    expect(session.header).toEqual({ format: 'dsh-session', version: 1, id: 'old', created: 50, cwd: '' })
    // no recorded workspace: the session works where the process runs, never in '/'
    expect(session.cwd).toBe(process.cwd())
    const migrated = [
      { type: 'user/message', seq: 0, time: 50, data: { id: 'u', content: [{ type: 'text', text: 'hi' }] } },
      { type: 'assistant/message', seq: 1, time: 60, data: { id: 'a', content: [{ type: 'text', text: 'yo' }], finish: 'stop' } },
      { type: 'old/thing', seq: 2, time: 61, data: 1, ignorable: true },
    ]
    expect(session.events.slice(0, 3)).toEqual(migrated)
    const said = `session old: migrated ${file} from format version 0 to 1; the original is kept as ${file}.v0.bak`
    expect(strip(session.events.slice(3))).toEqual([{ type: 'notice', seq: 3, data: { level: 'warn', source: 'persistence', message: said } }])
    expect(logged).toContain(said)
    expect(readFileSync(`${file}.v0.bak`, 'utf8')).toBe(v0)
    await session.close()
    expect(lines(file)).toEqual([JSON.stringify(session.header), ...session.events.map((e) => JSON.stringify(e)), ''])
    // Opening again is a plain version-1 load.
    const again = await root.sessions.open('old')
    expect(again.events).toEqual(session.events)
  })

  it('refuses an unknown non-ignorable event and skips an ignorable one', async () => {
    const { root, dir } = await setup()
    writeFileSync(join(dir, 'u1.jsonl'), [header('u1'), ev('turn/start', 0, { turn: 1 }), ev('mystery/event', 1, {}), ''].join('\n'))
    writeFileSync(join(dir, 'u2.jsonl'), [header('u2'), JSON.stringify({ type: 'mystery/event', seq: 0, time: 1, data: {}, ignorable: true }), ''].join('\n'))
    const error = await rejection(root.sessions.open('u1'))
    expect(error.code).toBe('UNSUPPORTED_EVENT')
    expect(error.message).toContain('"mystery/event" (seq 1)')
    expect(await root.sessionStore.isLocked('u1')).toBe(false)
    const ok = await root.sessions.open('u2')
    expect(ok.events.map((e) => e.type)).toEqual(['mystery/event'])
    expect(ok.deriveMessages()).toEqual([])
  })

  it('reports SESSION_NOT_FOUND and INVALID_SESSION_ID', async () => {
    const { root } = await setup()
    expect((await rejection(root.sessions.open('missing'))).code).toBe('SESSION_NOT_FOUND')
    expect((await rejection(root.sessionStore.read('../../etc/passwd'))).code).toBe('INVALID_SESSION_ID')
  })
})

describe('JSONL store: list', () => {
  it('lists headers, event counts from the tail, titles, cwd filter, newest first; skips unreadable files', async () => {
    const { root, dir, logged } = await setup()
    const a = await root.sessions.create({ cwd: '/a', id: 'a' })
    a.append('session/title', { title: 'First title' }, { ignorable: true })
    a.append('session/title', { title: 'Better title' }, { ignorable: true })
    a.append('user/message', { id: 'u', content: [{ type: 'text', text: 'x'.repeat(200_000) }] }) // a last line longer than one tail chunk
    await a.flush()
    const b = await root.sessions.create({ cwd: '/b', id: 'b', parent: { id: 'a', callId: 'c9' } })
    await b.close()
    writeFileSync(join(dir, 'old.jsonl'), JSON.stringify({ type: 'turn/start', time: 3, data: { turn: 1 } }) + '\n')
    writeFileSync(join(dir, 'junk.jsonl'), 'garbage\n')
    writeFileSync(join(dir, 'torn.jsonl'), `${header('torn')}\n${ev('turn/start', 0, { turn: 1 })}\n{"type":"tur`)
    const at = (file: string, seconds: number) => utimesSync(join(dir, file), seconds, seconds)
    at('a.jsonl', 3000); at('b.jsonl', 2000); at('old.jsonl', 1000); at('torn.jsonl', 500)

    const all = await root.sessions.list()
    expect(all).toEqual([
      { id: 'a', cwd: '/a', title: 'Better title', created: a.header.created, updatedAt: 3_000_000, events: 3 },
      { id: 'b', cwd: '/b', created: b.header.created, updatedAt: 2_000_000, events: 0, parent: { id: 'a', callId: 'c9' } },
      { id: 'old', cwd: '', created: 3, updatedAt: 1_000_000, events: 1 },
      { id: 'torn', cwd: '/w', created: 7, updatedAt: 500_000, events: 1 },
    ])
    expect(logged.some((line) => line.includes('junk.jsonl'))).toBe(true)
    expect((await root.sessions.list({ cwd: '/b' })).map((s) => s.id)).toEqual(['b'])
    // The title comes from the sidecar, refreshed from the log when a session is opened.
    expect(JSON.parse(readFileSync(join(dir, 'a.meta.json'), 'utf8'))).toEqual({ title: 'Better title' })
    await a.close()
    writeFileSync(join(dir, 'a.meta.json'), '{}')
    await (await root.sessions.open('a')).close()
    expect(JSON.parse(readFileSync(join(dir, 'a.meta.json'), 'utf8'))).toEqual({ title: 'Better title' })
    expect(statSync(join(dir, 'a.jsonl')).size).toBeGreaterThan(200_000)
  })

  it('lists nothing when the directory does not exist yet', async () => {
    const { dir, cleanup } = tempDir()
    cleanup()
    const root = new Context()
    const store = new JsonlSessionStore(root, { dir: join(dir, 'none') })
    expect(await store.list()).toEqual([])
  })
})
