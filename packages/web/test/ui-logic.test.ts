import { describe, expect, it } from 'vitest'
import { hunksOf } from '../ui/diffview.js'
import { renderMarkdown } from '../ui/markdown.js'
import { Transcript, type LoggedEvent } from '../ui/transcript.js'

let seq = 0
const ev = (type: string, data: unknown): LoggedEvent => ({ type, seq: seq++, time: 1000 + seq, data })

describe('markdown', () => {
  it('escapes raw HTML and drops unsafe URLs', () => {
    const html = renderMarkdown('<script>alert(1)</script> <img src=x onerror=alert(1)> [a](javascript:alert(1)) [b](JAVASCRIPT:x) [c](data:text/html,x) [d](vbscript:x) ![i](javascript:x) [ok](https://e.example/p) [rel](/s/abc)')
    expect(html).not.toMatch(/<script|<img[^>]*onerror|href="javascript|href="data|href="vbscript|src="javascript/i)
    expect(html).toContain('&lt;script&gt;')
    expect(html).toContain('<a href="https://e.example/p" target="_blank" rel="noopener noreferrer">ok</a>')
    expect(html).toContain('href="/s/abc"')
  })
})

describe('diff hunks', () => {
  it('a one-line edit in a long file is one small hunk with line numbers, not a rewrite', () => {
    const old = Array.from({ length: 200 }, (_, i) => `line ${i + 1}`).join('\n') + '\n'
    const next = old.replace('line 100\n', 'line one hundred\n')
    const hunks = hunksOf(old, next)
    expect(hunks).toHaveLength(1)
    const lines = hunks[0]!.lines
    expect(lines.length).toBe(8)
    expect(lines.filter((l) => l.kind === 'del')).toEqual([{ kind: 'del', oldNo: 100, newNo: null, text: 'line 100' }])
    expect(lines.filter((l) => l.kind === 'add')).toEqual([{ kind: 'add', oldNo: null, newNo: 100, text: 'line one hundred' }])
  })

  it('a new file is all added; an overwrite shows the old content as removed', () => {
    expect(hunksOf(null, 'a\nb\n')[0]!.lines.map((l) => l.kind)).toEqual(['add', 'add'])
    expect(hunksOf('old\n', 'new\n')[0]!.lines.map((l) => `${l.kind}:${l.text}`)).toEqual(['del:old', 'add:new'])
  })
})

describe('the transcript fold', () => {
  it('streams chunks into one assistant item that the final message replaces, and ignores replayed seqs', () => {
    const t = new Transcript()
    const events = [
      ev('turn/start', { turn: 1 }), ev('user/message', { id: 'u1', content: [{ type: 'text', text: 'hi' }] }),
      ev('assistant/chunk', { messageId: 'm1', kind: 'reasoning', delta: 'think' }),
      ev('assistant/chunk', { messageId: 'm1', kind: 'text', delta: 'Hel' }),
      ev('assistant/chunk', { messageId: 'm1', kind: 'text', delta: 'lo' }),
    ]
    for (const e of events) t.apply(e, null)
    expect(t.items.map((i) => i.kind)).toEqual(['user', 'assistant'])
    expect(t.items[1]).toMatchObject({ text: 'Hello', reasoning: 'think', streaming: true })
    for (const e of events) t.apply(e, null) // a replay after reconnect
    expect(t.items).toHaveLength(2)
    t.apply(ev('assistant/message', { id: 'm1', content: [{ type: 'reasoning', text: 'think' }, { type: 'text', text: 'Hello!' }], finish: 'stop' }), null)
    expect(t.items[1]).toMatchObject({ text: 'Hello!', streaming: false })
  })

  it('a call a crash cut is interrupted, a failed exit code is failed, a call still open at turn end is interrupted', () => {
    const t = new Transcript()
    t.apply(ev('turn/start', { turn: 1 }), null)
    t.apply(ev('tool/call', { callId: 'a', name: 'bash', args: { command: 'sleep 9' } }), { kind: 'tool-call', callId: 'a', tool: 'bash', card: { card: 'terminal', title: 'sleep 9' } })
    t.output('a', 'partial\n')
    expect(t.items[0]).toMatchObject({ status: 'running', output: 'partial\n' })
    t.apply(ev('tool/result', { callId: 'a', name: 'bash', content: [{ type: 'text', text: '[interrupted: dsh stopped before this call finished]' }], isError: true, synthetic: true }), null)
    expect(t.items[0]).toMatchObject({ status: 'interrupted' })
    t.apply(ev('tool/call', { callId: 'b', name: 'bash', args: {} }), null)
    t.apply(ev('tool/result', { callId: 'b', name: 'bash', content: [], isError: false }), { kind: 'tool-result', callId: 'b', tool: 'bash', card: { card: 'terminal', output: 'x', exitCode: 3 }, isError: false })
    expect(t.items[1]).toMatchObject({ status: 'failed' })
    t.apply(ev('tool/call', { callId: 'c', name: 'read', args: {} }), null)
    t.apply(ev('turn/end', { turn: 1, reason: 'interrupted' }), null)
    expect(t.items[2]).toMatchObject({ status: 'interrupted' })
    expect(t.items.at(-1)).toMatchObject({ kind: 'turn-end', reason: 'interrupted' })
    expect(t.turnRunning).toBe(false)
  })

  it('keeps the latest todo list', () => {
    const t = new Transcript()
    t.apply(ev('todo/write', { todos: [{ content: 'a', status: 'pending' }] }), null)
    t.apply(ev('todo/write', { todos: [{ content: 'a', status: 'completed' }, { content: 'b', status: 'in_progress' }] }), null)
    expect(t.todos.map((x) => x.status)).toEqual(['completed', 'in_progress'])
  })
})
