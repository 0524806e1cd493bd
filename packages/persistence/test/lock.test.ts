import { spawn } from 'node:child_process'
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Context } from '@deepseek-ai/cordis'
import * as sessions from '@dsh/core/sessions'
import { acquireLock, inspectLock } from '../src/lock.js'
import * as jsonl from '../src/plugins/jsonl.js'
import { buildWriter, deadPid, startWriter, tempDir } from './helpers.js'

let writer: string
const scratch = tempDir('dsh-writer-')
beforeAll(async () => { writer = await buildWriter(scratch.dir) })
afterAll(() => scratch.cleanup())

async function setup() {
  const tmp = tempDir()
  const root = new Context()
  await root.plugin(jsonl, { dir: tmp.dir })
  await root.plugin(sessions, {})
  return { root, dir: tmp.dir, done: async () => { await root.fiber.dispose(); tmp.cleanup() } }
}

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; hint?: string }> {
  try { await promise } catch (error) { return error as Error }
  throw new Error('expected a rejection')
}

const lockOf = (dir: string, id: string) => JSON.parse(readFileSync(join(dir, `${id}.lock`), 'utf8')) as { pid: number; host: string; started: number }

describe('writer lock across processes', () => {
  it('refuses a second writer while the holder lives, takes over once it is killed', async () => {
    const { root, dir, done } = await setup()
    const holder = await startWriter(writer, dir, 'shared', 'hold')
    try {
      expect(lockOf(dir, 'shared')).toEqual({ pid: holder.pid, host: hostname(), started: expect.any(Number) as number })
      expect(await root.sessionStore.isLocked('shared')).toBe(true)
      const error = await rejection(root.sessions.open('shared'))
      expect(error.code).toBe('SESSION_LOCKED')
      expect(error.message).toMatch(new RegExp(`^session shared is being written by pid ${holder.pid} on ${hostname()} \\(since `))
      expect(error.hint).toContain(`pid ${holder.pid}`)
      expect((await rejection(root.sessions.create({ cwd: '/', id: 'shared' }))).code).toBe('SESSION_LOCKED')
      // Reading needs no lock.
      expect((await root.sessions.read('shared')).header.cwd).toBe('/work')
    } finally {
      await holder.kill()
    }
    expect(await root.sessionStore.isLocked('shared')).toBe(false)
    const session = await root.sessions.open('shared')
    expect(lockOf(dir, 'shared').pid).toBe(process.pid)
    await session.close()
    expect(existsSync(join(dir, 'shared.lock'))).toBe(false)
    await done()
  })

  it('takes over a lock whose pid is dead', async () => {
    const { root, dir, done } = await setup()
    await (await root.sessions.create({ cwd: '/', id: 'dead' })).close()
    const pid = await deadPid()
    writeFileSync(join(dir, 'dead.lock'), JSON.stringify({ pid, host: hostname(), started: Date.now() }))
    expect(await root.sessionStore.isLocked('dead')).toBe(false)
    const session = await root.sessions.open('dead')
    expect(lockOf(dir, 'dead')).toEqual({ pid: process.pid, host: hostname(), started: expect.any(Number) as number })
    await session.close()
    await done()
  })

  it('takes over a lock whose pid now belongs to a process started after the lock was written', async () => {
    const { root, dir, done } = await setup()
    await (await root.sessions.create({ cwd: '/', id: 'reused' })).close()
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e9)'], { stdio: 'ignore' })
    try {
      await new Promise((resolve) => other.once('spawn', resolve))
      // The "holder" wrote its lock a minute before this pid's process started: the pid was reused.
      writeFileSync(join(dir, 'reused.lock'), JSON.stringify({ pid: other.pid, host: hostname(), started: Date.now() - 60_000 }))
      expect(await root.sessionStore.isLocked('reused')).toBe(false)
      // The same live pid with a lock written after it started is a live holder.
      writeFileSync(join(dir, 'reused.lock'), JSON.stringify({ pid: other.pid, host: hostname(), started: Date.now() }))
      expect(await root.sessionStore.isLocked('reused')).toBe(true)
      expect((await rejection(root.sessions.open('reused'))).message).toContain(`pid ${other.pid}`)
      // A lock naming this process's pid but older than it was left by a previous process.
      writeFileSync(join(dir, 'reused.lock'), JSON.stringify({ pid: process.pid, host: hostname(), started: 1 }))
      const session = await root.sessions.open('reused')
      expect(lockOf(dir, 'reused').started).toBeGreaterThan(1)
      await session.close()
    } finally {
      other.kill('SIGKILL')
    }
    await done()
  })

  it('refuses a lock from another host with a hint naming the lock file', async () => {
    const { root, dir, done } = await setup()
    await (await root.sessions.create({ cwd: '/', id: 'remote' })).close()
    writeFileSync(join(dir, 'remote.lock'), JSON.stringify({ pid: 4242, host: 'elsewhere.example', started: 5 }))
    const error = await rejection(root.sessions.open('remote'))
    expect(error.code).toBe('SESSION_LOCKED')
    expect(error.message).toBe('session remote is being written by pid 4242 on elsewhere.example (since 1970-01-01T00:00:00.005Z)')
    expect(error.hint).toContain(join(dir, 'remote.lock'))
    await done()
  })

  it('treats an old empty lock file as a crash between create and write', async () => {
    const { dir, cleanup } = tempDir()
    const path = join(dir, 'x.lock')
    writeFileSync(path, '')
    expect(await inspectLock(path)).toEqual({ kind: 'unwritten' })
    utimesSync(path, 1, 1)
    expect(await inspectLock(path)).toEqual({ kind: 'stale', info: undefined, raw: '' })
    const release = await acquireLock(path, 'x')
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid })
    // Release removes only this process's own lock.
    writeFileSync(path, JSON.stringify({ pid: 1, host: 'h', started: 1 }))
    await release()
    expect(existsSync(path)).toBe(true)
    cleanup()
  })
})

describe('crash safety with a real process', () => {
  it('keeps every flushed event after SIGKILL, drops the unflushed one, and repairs on open', async () => {
    const { root, dir, done } = await setup()
    const crashed = await startWriter(writer, dir, 'crash', 'crash-after-call')
    await crashed.kill()
    const session = await root.sessions.open('crash')
    const strip = session.events.map(({ type, seq, data }) => ({ type, seq, data }))
    expect(strip).toEqual([
      { type: 'turn/start', seq: 0, data: { turn: 1 } },
      { type: 'user/message', seq: 1, data: { id: 'u1', content: [{ type: 'text', text: 'run ls' }] } },
      { type: 'step/start', seq: 2, data: { turn: 1, step: 1 } },
      { type: 'assistant/message', seq: 3, data: {
        id: 'a1', finish: 'tool-calls',
        content: [{ type: 'text', text: 'Listing.' }, { type: 'tool-call', id: 'call-1', name: 'bash', arguments: '{"command":"ls"}' }],
      } },
      { type: 'tool/call', seq: 4, data: { callId: 'call-1', name: 'bash', args: { command: 'ls' } } },
      { type: 'tool/result', seq: 5, data: {
        callId: 'call-1', name: 'bash', content: [{ type: 'text', text: '[interrupted: dsh stopped before this call finished]' }], isError: true, synthetic: true,
      } },
      { type: 'step/end', seq: 6, data: { turn: 1, step: 1 } },
      { type: 'turn/end', seq: 7, data: { turn: 1, reason: 'interrupted' } },
    ])
    // The repairs are on disk before open resolves (no close needed).
    const onDisk = readFileSync(join(dir, 'crash.jsonl'), 'utf8').split('\n').slice(1, -1).map((line) => JSON.parse(line) as { seq: number })
    expect(onDisk.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    expect(session.deriveMessages().map((m) => m.role)).toEqual(['user', 'assistant', 'tool'])
    await session.close()
    await done()
  })
})
