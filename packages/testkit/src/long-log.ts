/**
 * A long, realistic session log as JSONL text (pure): for tests and benchmarks of long
 * sessions. Turns of a user message, then steps of streamed chunks, an assistant message
 * with one bash call, the call and its result (`outputLines` lines of output, ~2 KB by
 * default), `step/end`; then a step with the answer; every turn completed. Exactly `events` events after the header line; the last turn may be cut short
 * (the log then ends mid-turn, as a crash would leave it: load repairs it).
 */
export interface LongLogOptions {
  id: string
  cwd: string
  created?: number
  /** Lines of tool output per call (default 40, ~2 KB). */
  outputLines?: number
  /** Every this many turns a `history/replace` summarises everything before it, as compaction would (default: never). */
  compactEvery?: number
}

export function longSessionLog(events: number, header: LongLogOptions): string {
  const created = header.created ?? 1_700_000_000_000
  const outputLines = header.outputLines ?? 40
  const lines = [JSON.stringify({ format: 'dsh-session', version: 1, id: header.id, created, cwd: header.cwd })]
  const push = (type: string, data: unknown, ignorable?: true) => {
    const seq = lines.length - 1
    lines.push(JSON.stringify({ type, seq, time: created + seq, data, ...(ignorable ? { ignorable } : {}) }))
  }
  const output = 'drwxr-xr-x  2 user user 4096 Nov 29 18:59 src/\n'.repeat(outputLines)
  for (let turn = 1; lines.length - 1 < events; turn++) {
    push('turn/start', { turn })
    if (header.compactEvery && turn > 1 && (turn - 1) % header.compactEvery === 0) {
      push('history/replace', { fromSeq: 0, toSeq: lines.length - 3, summary: `Turns 1 to ${turn - 1}: fixed the failing tests one by one.` })
    }
    push('user/message', { id: `u${turn}`, content: [{ type: 'text', text: `Please look at the files in src and fix the failing test number ${turn}.` }], via: 'prompt' })
    for (let step = 1; step <= 4; step++) {
      push('step/start', { turn, step })
      if (turn === 1 && step === 1) push('request/header', { system: 'You are dsh.', tools: [], config: { provider: 'deepseek', model: 'deepseek-chat' } })
      const messageId = `${turn}:${step}`
      for (let c = 0; c < 18; c++) push('assistant/chunk', { messageId, kind: c < 6 ? 'reasoning' : 'text', delta: 'some streamed words ' }, true)
      const callId = `call_${turn}_${step}`
      const args = { command: 'ls -la src', description: 'list files' }
      push('assistant/message', {
        id: messageId, finish: 'tool-calls', usage: { inputTokens: 12000, outputTokens: 300 },
        content: [
          { type: 'reasoning', text: 'I should list the directory to see what is there. ' },
          { type: 'text', text: 'Let me look at the directory first.' },
          { type: 'tool-call', id: callId, name: 'bash', arguments: JSON.stringify(args) },
        ],
      })
      push('tool/call', { callId, name: 'bash', args })
      push('tool/result', { callId, name: 'bash', content: [{ type: 'text', text: output }], isError: false })
      push('step/end', { turn, step, usage: { inputTokens: 12000, outputTokens: 300 } })
    }
    push('step/start', { turn, step: 5 })
    push('assistant/message', { id: `${turn}:5`, finish: 'stop', content: [{ type: 'text', text: `Fixed test ${turn}.` }] })
    push('step/end', { turn, step: 5 })
    push('turn/end', { turn, reason: 'completed' })
  }
  return `${lines.slice(0, events + 1).join('\n')}\n`
}
