// Bench: open (lock + read + parse + check + repair scan) and derive a 100,000-event session.
// Run after `npm run build`: `node packages/persistence/bench/load-derive.mjs [events] [runs]`.
// Prints one JSON line: {events, bytes, runs, medianMs, minMs, maxMs}. Target (DESIGN.md §7): median ≤ 150 ms.
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import * as jsonl from '@dsh/persistence/jsonl'
import * as sessions from '@dsh/core/sessions'

const total = Number(process.argv[2] ?? 100_000)
const runs = Number(process.argv[3] ?? 9)
const dir = mkdtempSync(join(tmpdir(), 'dsh-bench-'))
const id = 'bench-session'

/** A realistic log: turns of user message, then steps of streamed chunks, an assistant message, a tool call and its ~2 KB result. */
function generate(n) {
  const lines = [JSON.stringify({ format: 'dsh-session', version: 1, id, created: 1_700_000_000_000, cwd: '/work/project' })]
  const push = (type, data, ignorable) => {
    const event = { type, seq: lines.length - 1, time: 1_700_000_000_000 + lines.length, data }
    if (ignorable) event.ignorable = true
    lines.push(JSON.stringify(event))
  }
  const output = 'drwxr-xr-x  2 user user 4096 Nov 29 18:59 src/\n'.repeat(40)
  let turn = 0
  while (lines.length - 1 < n) {
    turn++
    push('turn/start', { turn })
    push('user/message', { id: `u${turn}`, content: [{ type: 'text', text: `Please look at the files in src and fix the failing test number ${turn}.` }], via: 'prompt' })
    for (let step = 1; step <= 4 && lines.length - 1 < n; step++) {
      push('step/start', { turn, step })
      if (turn === 1 && step === 1) push('request/header', { system: 'You are dsh.'.repeat(100), tools: [], config: { provider: 'deepseek', model: 'deepseek-chat' } })
      const messageId = `a${turn}.${step}`
      for (let c = 0; c < 18; c++) push('assistant/chunk', { messageId, kind: c < 6 ? 'reasoning' : 'text', delta: 'some streamed words ' }, true)
      const callId = `call_${turn}_${step}`
      push('assistant/message', {
        id: messageId, finish: 'tool-calls', usage: { inputTokens: 12000, outputTokens: 300 },
        content: [
          { type: 'reasoning', text: 'I should list the directory to see what is there. '.repeat(4) },
          { type: 'text', text: 'Let me look at the directory first. '.repeat(3) },
          { type: 'tool-call', id: callId, name: 'bash', arguments: JSON.stringify({ command: 'ls -la src', description: 'list files' }) },
        ],
      })
      push('tool/call', { callId, name: 'bash', args: { command: 'ls -la src', description: 'list files' } })
      push('tool/result', { callId, name: 'bash', content: [{ type: 'text', text: output }], isError: false })
      push('step/end', { turn, step, usage: { inputTokens: 12000, outputTokens: 300 } })
    }
    push('turn/end', { turn, reason: 'completed' })
  }
  return lines.slice(0, n + 1).join('\n') + '\n'
}

const file = join(dir, `${id}.jsonl`)
const text = generate(total)
const times = []
let messages = 0
try {
  for (let r = 0; r < runs; r++) {
    writeFileSync(file, text) // the same bytes each run (a run may append repair events)
    const root = new Context()
    await root.plugin(jsonl, { dir })
    await root.plugin(sessions, {})
    const started = performance.now()
    const session = await root.sessions.open(id)
    messages = session.deriveMessages().length
    times.push(performance.now() - started)
    await session.close()
    await root.fiber.dispose()
  }
  times.sort((a, b) => a - b)
  const round = (x) => Math.round(x * 10) / 10
  console.log(JSON.stringify({
    events: total, bytes: statSync(file).size, messages, runs,
    medianMs: round(times[Math.floor(times.length / 2)]), minMs: round(times[0]), maxMs: round(times[times.length - 1]),
  }))
} finally {
  if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true }); else console.log(dir)
}
