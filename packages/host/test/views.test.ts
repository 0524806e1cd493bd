import * as fsPlugin from '@dsh/exec/fs'
import * as sandboxPlugin from '@dsh/exec/sandbox'
import * as shellPlugin from '@dsh/exec/shell'
import * as subprocessPlugin from '@dsh/exec/subprocess'
import { LazyViews, viewOf, viewsOf } from '@dsh/host'
import type { Json, SessionEvent } from '@dsh/protocol'
import type { ToolDefinition } from '@dsh/core'
import { z } from 'zod'
import * as bashPlugin from '@dsh/tools-builtin/bash'
import * as filesPlugin from '@dsh/tools-builtin/files'
import * as searchPlugin from '@dsh/tools-builtin/search'
import * as todoPlugin from '@dsh/tools-builtin/todo'
import { tempDir, useMockModel } from '@dsh/testkit/tree'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { hostTree } from './helpers.js'

const model = useMockModel()

describe('views', () => {
  it('a session with every card kind gives identical views live, in history pages and replayed from the stored log', async () => {
    const t = await hostTree(model(), {
      store: { dir: tempDir('dsh-store-') },
      plugins: [[subprocessPlugin, {}], [sandboxPlugin, {}], [fsPlugin, {}], [shellPlugin, {}], [bashPlugin, {}], [filesPlugin, {}], [searchPlugin, {}], [todoPlugin, {}]],
    })
    writeFileSync(join(t.workspace, 'notes.txt'), 'alpha\nbeta\n')
    model().setScript([
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo hi; exit 2' } }] },
      { toolCalls: [{ name: 'write', arguments: { path: 'new.txt', content: 'fresh\n' } }] },
      { toolCalls: [{ name: 'read', arguments: { path: 'notes.txt' } }] },
      { toolCalls: [{ name: 'grep', arguments: { pattern: 'beta' } }] },
      { toolCalls: [{ name: 'todo_write', arguments: { todos: [{ content: 'x', status: 'pending' }] } }] },
      { toolCalls: [{ name: 'no_such_tool', arguments: {} }] },
      { text: 'all cards shown' },
    ])
    const { conn, client } = t.connect()
    const { session } = await conn.call('session/create', { workspace: t.workspace, permissionMode: 'danger-full-access' })
    await conn.call('session/prompt', { sessionId: session.id, prompt: 'show every card' })
    expect((await client.turnEnd(session.id)).data).toMatchObject({ reason: 'completed' })
    const live = client.events.filter((e) => e.sessionId === session.id)
    const cards = live.flatMap((e) => (e.view ? [(e.view as { kind: string; card: { card: string } }).kind + ':' + (e.view as { card: { card: string } }).card.card] : []))
    for (const kind of ['terminal', 'diff', 'read', 'search', 'generic']) expect(cards).toContain(`tool-result:${kind}`)
    expect(cards).toContain('tool-call:terminal')
    // live output of the running command went out as session/output (never as an event)
    const bashCall = live.find((e) => e.event.type === 'tool/call' && (e.event.data as { name: string }).name === 'bash')!
    expect(client.outputs.filter((o) => o.toolCallId === (bashCall.event.data as { callId: string }).callId).map((o) => o.data).join('')).toContain('hi')
    expect(client.violations).toEqual([])
    // replay: the same views from a fresh read of the stored log
    await conn.call('session/close', { sessionId: session.id })
    const stored = await t.root.sessions.read(session.id)
    expect(viewsOf(stored.events, (name) => t.root.tools.get(name))).toEqual(live.map((e) => e.view))
    expect(stored.events.slice(0, live.length)).toEqual(live.map((e) => e.event))
    // history pages of the stored session carry the same views
    const page = await conn.call('session/history', { sessionId: session.id, afterSeq: 4, limit: 10 })
    expect(page.items.map((i) => i.view)).toEqual(live.slice(5, 15).map((e) => e.view))
    expect(page.hasMore).toBe(true)
    // viewOf is pure: events other than calls and results have no view
    expect(viewOf(stored.events[0]!, { tool: () => undefined, argsOf: () => null })).toBeNull()
  })

  it('LazyViews: each view on demand, in any order, equals viewsOf; asking for a late event computes no earlier view', () => {
    const events: SessionEvent[] = []
    const push = (type: string, data: unknown) => events.push({ type, seq: events.length, time: 0, data: data as Json })
    for (let i = 0; i < 200; i++) {
      push('step/start', { turn: 1, step: i + 1 })
      push('tool/call', { callId: `c${i}`, name: 'bash', args: { command: `echo ${i}`, description: `step ${i}` } })
      push('tool/result', { callId: `c${i}`, name: 'bash', content: [{ type: 'text', text: `${i}\n[exit code: 0]` }], isError: false })
    }
    const presented: string[] = []
    // a presenter that shows the call's arguments in the result card (so a wrong call lookup shows)
    const def = {
      name: 'bash', parameters: z.object({ command: z.string(), description: z.string() }),
      presentResult: (args: { command: string }) => ({ card: 'test', command: args.command }),
    } as unknown as ToolDefinition
    const tool = (name: string) => {
      presented.push(name)
      return def
    }
    const expected = viewsOf(events, () => def)
    const lazy = new LazyViews(() => events, tool)
    expect(lazy.at(events.length - 1)).toEqual(expected.at(-1))
    expect(presented).toHaveLength(1) // the last result's view only
    const order = events.map((e) => e.seq).sort((a, b) => ((a * 7919) % 601) - ((b * 7919) % 601))
    for (const seq of order) expect(lazy.at(seq)).toEqual(expected[seq])
    expect(presented).toHaveLength(400) // each call and result once, never twice
    expect(expected[2]).toMatchObject({ kind: 'tool-result', callId: 'c0', card: { card: 'test', command: 'echo 0' } })
    expect(expected[599]).toMatchObject({ card: { command: 'echo 199' } })
  })
})
