import { METHODS, type MethodName } from '@dsh/host-api'
import * as anthropicPlugin from '@dsh/llm-anthropic/adapter'
import { tempDir, useMockModel } from '@dsh/testkit/tree'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { HANDLERS } from '../src/methods/index.js'
import { hostTree, rejection } from './helpers.js'

const model = useMockModel()

describe('session operations', () => {
  it('fork at a seq or an assistant message rounds to the end of the step; the source is untouched; a point not in the log is refused', async () => {
    model().setScript([{ text: 'first answer' }, { text: 'second answer' }])
    const t = await hostTree(model())
    const { conn, client } = t.connect()
    const { session } = await conn.call('session/create', { workspace: t.workspace })
    await conn.call('session/prompt', { sessionId: session.id, prompt: 'one' })
    await client.turnEnd(session.id)
    await conn.call('session/prompt', { sessionId: session.id, prompt: 'two' })
    await client.turnEnd(session.id, 2)
    const source = client.of(session.id)
    const message = source.find((e) => e.type === 'assistant/message')!
    const stepEnd = source.find((e) => e.type === 'step/end' && e.seq > message.seq)!
    const before = JSON.stringify(t.root.sessions.get(session.id)!.events)
    const forked = (await conn.call('session/fork', { sessionId: session.id, atMessageId: (message.data as { id: string }).id })).session
    const copy = await t.root.sessions.read(forked.id)
    // the step's end is copied, then the repair closes the turn it was cut in
    expect(copy.events[stepEnd.seq]).toMatchObject({ type: 'step/end' })
    expect(copy.events.slice(0, stepEnd.seq + 1).map((e) => e.type)).toEqual(source.slice(0, stepEnd.seq + 1).map((e) => e.type))
    expect(copy.events.at(-1)).toMatchObject({ type: 'turn/end' })
    expect(copy.header.parent).toEqual({ id: session.id, fork: true })
    const bySeq = (await conn.call('session/fork', { sessionId: session.id, atSeq: message.seq - 1 })).session
    expect((await t.root.sessions.read(bySeq.id)).events[stepEnd.seq]).toMatchObject({ type: 'step/end' })
    expect(JSON.stringify(t.root.sessions.get(session.id)!.events)).toBe(before)
    expect((await rejection(conn.call('session/fork', { sessionId: session.id, atSeq: 10_000 }))).code).toBe('FORK_POINT_NOT_FOUND')
    expect((await rejection(conn.call('session/fork', { sessionId: session.id, atMessageId: 'nope' }))).code).toBe('FORK_POINT_NOT_FOUND')
    expect((await rejection(conn.call('session/fork', { sessionId: 'no-such', atSeq: 1 }))).code).toBe('SESSION_NOT_FOUND')
  })

  it('list: newest first, cursor pages, workspace filter, title and content search, archived hidden unless asked; rename; delete refused while running', async () => {
    model().setScript([{ text: 'the answer mentions zebras' }, { fault: 'stall' }])
    const t = await hostTree(model(), { store: { dir: tempDir('dsh-store-') } })
    const { conn, client } = t.connect()
    const other = tempDir('dsh-ws2-')
    const ids: string[] = []
    for (const workspace of [t.workspace, other, t.workspace]) {
      const { session } = await conn.call('session/create', { workspace })
      ids.push(session.id)
      await conn.call('session/close', { sessionId: session.id })
      await new Promise((r) => setTimeout(r, 15))
    }
    const all = await conn.call('session/list', {})
    expect(all.sessions.map((s) => s.id).filter((id) => ids.includes(id))).toEqual([...ids].reverse())
    const page1 = await conn.call('session/list', { limit: 2 })
    const page2 = await conn.call('session/list', { limit: 2, cursor: page1.nextCursor! })
    expect([...page1.sessions, ...page2.sessions].map((s) => s.id)).toEqual(all.sessions.map((s) => s.id))
    expect(page2.nextCursor).toBeNull()
    expect((await conn.call('session/list', { workspace: other })).sessions.map((s) => s.id)).toEqual([ids[1]])
    await conn.call('session/rename', { sessionId: ids[0]!, title: 'Fix the flaky tests' })
    expect((await conn.call('session/list', { query: 'flaky' })).sessions.map((s) => s.id)).toEqual([ids[0]])
    await conn.call('session/open', { sessionId: ids[2]! })
    await conn.call('session/prompt', { sessionId: ids[2]!, prompt: 'tell me about animals' })
    await client.turnEnd(ids[2]!)
    expect((await conn.call('session/list', { query: 'ZEBRAS' })).sessions.map((s) => s.id)).toEqual([ids[2]])
    await conn.call('session/archive', { sessionId: ids[1]!, archived: true })
    expect((await conn.call('session/list', {})).sessions.map((s) => s.id)).not.toContain(ids[1])
    expect((await conn.call('session/list', { archived: true })).sessions.map((s) => s.id)).toEqual([ids[1]])
    await conn.call('session/prompt', { sessionId: ids[2]!, prompt: 'stall' })
    await client.status(ids[2]!, 'running')
    expect((await rejection(conn.call('session/delete', { sessionId: ids[2]! }))).code).toBe('SESSION_BUSY')
    await conn.call('session/cancel', { sessionId: ids[2]! })
    await client.turnEnd(ids[2]!, 2)
    await client.status(ids[2]!, 'idle')
    await conn.call('session/delete', { sessionId: ids[2]! })
    expect((await rejection(conn.call('session/get', { sessionId: ids[2]! }))).code).toBe('SESSION_NOT_FOUND')
    const exported = await conn.call('session/export', { sessionId: ids[0]! })
    const lines = exported.jsonl.trimEnd().split('\n').map((l) => JSON.parse(l) as { type?: string; format?: string })
    expect(lines[0]).toMatchObject({ format: 'dsh-session', id: ids[0] })
    expect(lines.at(-1)).toMatchObject({ type: 'session/title', data: { title: 'Fix the flaky tests' } })
  })

  it('open: SESSION_BUSY for another owner, WORKSPACE_GONE when the workspace was deleted, a note when a crash left a turn open', async () => {
    const t = await hostTree(model(), { store: { dir: tempDir('dsh-store-') } })
    const { conn, client } = t.connect()
    const { session } = await conn.call('session/create', { workspace: t.workspace })
    // what a crash leaves: a turn started and never ended
    const live = t.root.sessions.get(session.id)!
    live.append('turn/start', { turn: 1 })
    live.append('user/message', { id: 'u-x', content: [{ type: 'text', text: 'hi' }] })
    await conn.call('session/close', { sessionId: session.id })
    const opened = await conn.call('session/open', { sessionId: session.id })
    expect(opened.session.lastSeq).toBeGreaterThan(3)
    await new Promise((r) => setTimeout(r, 20))
    const shown = client.of(session.id).slice(-3).map((e) => [e.type, (e.data as { message?: string }).message ?? (e.data as { reason?: string }).reason])
    expect(shown.at(-1)![1]).toMatch(/closed what a crash left open/)
    expect(shown.map((s) => s[0])).toContain('turn/end')
    await conn.call('session/close', { sessionId: session.id })
    const gone = tempDir('dsh-gone-')
    const { session: doomed } = await conn.call('session/create', { workspace: gone })
    await conn.call('session/close', { sessionId: doomed.id })
    rmSync(gone, { recursive: true })
    const error = await rejection(conn.call('session/open', { sessionId: doomed.id }))
    expect([error.code, error.message]).toEqual(['WORKSPACE_GONE', expect.stringContaining(gone)])
    expect(await t.root.sessionStore.isLocked(doomed.id)).toBe(false)
  })

  it('races: two clients opening one session at once (one wins, one SESSION_BUSY), one client twice (one hosted session), a client gone mid-open (closed, unlocked)', async () => {
    const t = await hostTree(model(), { store: { dir: tempDir('dsh-store-') } })
    const a = t.connect()
    const { session } = await a.conn.call('session/create', { workspace: t.workspace })
    await a.conn.call('session/close', { sessionId: session.id })
    const b = t.connect()
    const both = await Promise.allSettled([a.conn.call('session/open', { sessionId: session.id }), b.conn.call('session/open', { sessionId: session.id })])
    expect(both.map((r) => r.status)).toEqual(['fulfilled', 'rejected'])
    expect(((both[1] as PromiseRejectedResult).reason as { code: string }).code).toBe('SESSION_BUSY')
    const twice = await Promise.all([a.conn.call('session/open', { sessionId: session.id }), a.conn.call('session/open', { sessionId: session.id })])
    expect(twice[0].session.id).toBe(twice[1].session.id)
    await a.conn.call('session/close', { sessionId: session.id })
    const c = t.connect()
    const opening = c.conn.call('session/open', { sessionId: session.id })
    await c.conn.close()
    const error = await rejection(opening)
    expect(['CONNECTION_CLOSED', 'SESSION_CLOSED']).toContain(error.code)
    expect(await t.root.sessionStore.isLocked(session.id)).toBe(false)
    expect(t.root.sessions.get(session.id)).toBeUndefined()
    // and the session opens again afterwards
    expect((await b.conn.call('session/open', { sessionId: session.id })).session.open).toBe(true)
  })

  it('defaults: explicit param, then the agent preset, then settings; a model travels only with its provider', async () => {
    // the credentials row reads the environment once, when it starts
    process.env.ANTHROPIC_API_KEY = 'mock-anthropic'
    try {
      const t = await hostTree(model(), { plugins: [[anthropicPlugin]] })
      writeFileSync(join(t.home, 'settings.yaml'), 'version: 1\nprovider: deepseek\nmodel: deepseek-reasoner\npermissionMode: read-only\nreasoningEffort: high\n')
      t.root.settings.reload()
      const { conn } = t.connect()
      const fromSettings = (await conn.call('session/create', { workspace: t.workspace })).session.config
      expect(fromSettings).toMatchObject({ provider: 'deepseek', model: 'deepseek-reasoner', permissionMode: 'read-only', reasoningEffort: 'high' })
      const otherProvider = (await conn.call('session/create', { workspace: t.workspace, provider: 'anthropic' })).session.config
      expect(otherProvider.provider).toBe('anthropic')
      expect(otherProvider.model).not.toBe('deepseek-reasoner')
      const explicit = (await conn.call('session/create', { workspace: t.workspace, model: 'deepseek-chat', permissionMode: 'workspace-write' })).session
      expect(explicit.config).toMatchObject({ model: 'deepseek-chat', permissionMode: 'workspace-write' })
      const described = await conn.call('host/describe', {})
      expect(described.defaults).toMatchObject({ provider: 'deepseek', model: 'deepseek-reasoner', permissionMode: 'read-only', reasoningEffort: 'high', agentPreset: 'standard' })
      const switched = await conn.call('session/set_model', { sessionId: explicit.id, provider: 'anthropic' })
      expect(switched.config.provider).toBe('anthropic')
      expect(switched.config.model).not.toBe('deepseek-chat')
      expect((await conn.call('session/set_effort', { sessionId: explicit.id, reasoningEffort: 'low' })).config.reasoningEffort).toBe('low')
      expect((await conn.call('session/set_mode', { sessionId: explicit.id, permissionMode: 'read-only' })).config.permissionMode).toBe('read-only')
      expect((await conn.call('session/set_preset', { sessionId: explicit.id, agentPreset: 'minimal' })).config.agentPreset).toBe('minimal')
      expect((await rejection(conn.call('session/set_preset', { sessionId: explicit.id, agentPreset: 'nope' }))).code).toBe('UNKNOWN_AGENT_PRESET')
      expect((await rejection(conn.call('session/set_model', { sessionId: explicit.id, provider: 'nope' }))).code).toBe('UNKNOWN_PROVIDER')
    } finally {
      delete process.env.ANTHROPIC_API_KEY
    }
  })

  it('commands run without a model request; /clear opens a new session in the same workspace; an unknown one is UNKNOWN_COMMAND', async () => {
    const t = await hostTree(model())
    const { conn } = t.connect()
    const { session } = await conn.call('session/create', { workspace: t.workspace, permissionMode: 'read-only' })
    const status = await conn.call('session/command', { sessionId: session.id, line: '/status' })
    expect(status).toMatchObject({ name: 'status', startedTurn: false, newSessionId: null })
    expect(status.reply).toContain(session.id)
    const cleared = await conn.call('session/command', { sessionId: session.id, line: '/clear' })
    expect(cleared.newSessionId).not.toBeNull()
    const fresh = await conn.call('session/get', { sessionId: cleared.newSessionId! })
    expect(fresh.session).toMatchObject({ workspace: t.workspace, open: true, config: { permissionMode: 'read-only' } })
    const unknown = await rejection(conn.call('session/command', { sessionId: session.id, line: '/frobnicate' }))
    expect([unknown.code, unknown.message]).toEqual(['UNKNOWN_COMMAND', expect.stringContaining('Unknown command /frobnicate')])
    expect(model().requests).toHaveLength(0)
  })

  it('settings: read redacted with a revision, update refused on a stale revision; credentials: described, set and unset, never a value', async () => {
    const t = await hostTree(model())
    const { conn } = t.connect()
    const read = await conn.call('settings/read', {})
    const updated = await conn.call('settings/update', { set: { permissionMode: 'read-only' }, expectedRevision: read.revision })
    expect(updated.settings).toMatchObject({ permissionMode: 'read-only' })
    expect(updated.revision).not.toBe(read.revision)
    expect((await rejection(conn.call('settings/update', { set: { model: 'x' }, expectedRevision: read.revision }))).code).toBe('SETTINGS_CONFLICT')
    expect((await rejection(conn.call('settings/update', { set: { permissionMode: 'yolo' } }))).code).toBe('UNKNOWN_PRESET')
    const described = await conn.call('credentials/describe', {})
    expect(described.providers.find((p) => p.provider === 'deepseek')).toMatchObject({ configured: true, source: 'env', envVar: 'DEEPSEEK_API_KEY' })
    await conn.call('credentials/set', { provider: 'anthropic', key: 'sk-canary-123' })
    const after = await conn.call('credentials/describe', {})
    expect(after.providers.find((p) => p.provider === 'anthropic')).toMatchObject({ configured: true, source: 'store' })
    expect(JSON.stringify(after)).not.toContain('sk-canary-123')
    await conn.call('credentials/unset', { provider: 'anthropic' })
    expect((await conn.call('credentials/describe', {})).providers.find((p) => p.provider === 'anthropic')!.source).not.toBe('store')
    expect((await rejection(conn.call('credentials/set', { provider: 'nosuch', key: 'k' }))).code).toBe('UNKNOWN_PROVIDER')
    const rpc = await conn.call('rpc/describe', {})
    expect(rpc.methods.map((m) => (m as { name: string }).name)).toEqual(Object.keys(METHODS))
    const init = await conn.call('initialize', { protocolVersion: 1, client: { name: 't', version: '1' }, capabilities: { questions: false } })
    expect(init.capabilities).toMatchObject({ approvals: true, questions: false, tools: true })
  })
})

/** A value of the wrong type for the first param of each method (or a bogus extra key for those without params). */
function wrongParams(method: MethodName): unknown {
  const shape = (METHODS[method].params as unknown as { shape?: Record<string, unknown> }).shape ?? {}
  const keys = Object.keys(shape)
  if (!keys.length) return { bogus: 1 }
  return Object.fromEntries(keys.map((k) => [k, { wrong: [1] }]))
}

describe('bad input for every method of the table', () => {
  it('has a handler for every method', () => {
    expect(Object.keys(HANDLERS).sort()).toEqual(Object.keys(METHODS).sort())
  })

  it.each(Object.keys(METHODS) as MethodName[])('%s: params of the wrong type are INVALID_PARAMS naming the field', async (method) => {
    const t = await hostTree(model())
    const { conn } = t.connect()
    const error = await rejection(conn.callUnchecked(method, wrongParams(method)))
    expect(error.code).toBe('INVALID_PARAMS')
    expect(error.data.issues.length).toBeGreaterThan(0)
    expect(error.data.issues[0].path).toMatch(/^params(\.|$)/)
    const notObject = await rejection(conn.callUnchecked(method, 'a string'))
    expect(notObject.code).toBe('INVALID_PARAMS')
  })

  it('an unknown method is METHOD_NOT_FOUND, quoting a short prefix of it', async () => {
    const t = await hostTree(model())
    const { conn } = t.connect()
    const error = await rejection(conn.callUnchecked('x'.repeat(10_000), {}))
    expect(error.code).toBe('METHOD_NOT_FOUND')
    expect(error.message.length).toBeLessThan(200)
    expect((await rejection(conn.callUnchecked('__proto__', {}))).code).toBe('METHOD_NOT_FOUND')
  })
})
