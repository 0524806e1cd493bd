import { startMockModel, treeRssKb, type MockModel } from '@dsh/testkit'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { spawnDsh, collect, tempDir } from './helpers/dsh.js'
import { expectModelSawOnlyLogs, sessionIdOf } from './helpers/session-file.js'

// Issue 13, bad input: a command that prints 100 MB keeps memory bounded. What may hold
// output is bounded by the shell contract: the in-memory tail (one 30 KB ring), one 64 KB
// read buffer per command (decision 0070), the live text (≤ 4 MiB of the stream decoded),
// and the command's own processes (yes, head, bash, bwrap: a few MB). The bound is the
// same dsh's peak with 1 KB of output plus 20 MB. Anything that kept the stream needs
// ≥ 100 MB; a fresh buffer per pipe read (before 0070) peaked 40–73 MB above, garbage V8
// frees late.
const BIG = 100_000_000
const MARGIN_MB = 20

let model: MockModel
let home: string
let workspace: string

beforeAll(async () => { model = await startMockModel() })
afterAll(async () => { await model.close() })
beforeEach(() => {
  home = tempDir('dsh-home-')
  workspace = tempDir('dsh-ws-')
  model.requests.length = 0
})
afterEach(() => expectModelSawOnlyLogs(home, model))

/** Runs one headless turn whose bash call prints `bytes`; the peak tree RSS sampled every 5 ms. */
async function runPrinting(bytes: number, env: Record<string, string> = {}) {
  model.setScript([
    { toolCalls: [{ name: 'bash', arguments: { command: `yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c ${bytes}` } }] },
    // the spill file lives in the session's temp folder, removed when the run ends: measured from inside
    { toolCalls: [{ name: 'bash', arguments: { command: 'wc -c "$TMPDIR"/dsh-bash-*.log' } }] },
    { text: 'done' },
  ])
  const child = spawnDsh(['--profile', 'headless', 'print a lot'], {
    cwd: workspace, env: { DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock', ...env },
  })
  let peakKb = 0
  const poll = setInterval(() => { peakKb = Math.max(peakKb, treeRssKb(child.pid!)) }, 5)
  const result = await collect(child, { timeoutMs: 120_000 })
  clearInterval(poll)
  return { ...result, peakMb: peakKb / 1024 }
}

function toolText(request: number): string {
  const messages = (model.requests[request]!.body as { messages: { role: string; content: string }[] }).messages
  return messages.filter((m) => m.role === 'tool').at(-1)!.content
}

describe('a command that prints 100 MB', () => {
  it('keeps the tree RSS bounded, shows a truncated tail, spills the whole stream and keeps the log small', async () => {
    const small = await runPrinting(1000)
    expect(small.code).toBe(0)
    const big = await runPrinting(BIG)
    expect(big.code, big.stderr).toBe(0)
    expect(big.peakMb, `peak tree RSS: ${small.peakMb.toFixed(1)} MB with 1 KB of output, ${big.peakMb.toFixed(1)} MB with 100 MB`).toBeLessThan(small.peakMb + MARGIN_MB)

    // the model got the tail and where the rest is, per the shell contract
    const text = toolText(model.requests.length - 2)
    expect(text.length).toBeLessThanOrEqual(31_000)
    const spill = /\[output truncated: [^\n]*full output: ([^\]\n]+)\]/.exec(text)
    expect(spill, text.slice(-300)).not.toBeNull()
    expect(toolText(model.requests.length - 1)).toBe(`${BIG} ${spill![1]!.trim()}`)

    // the session log holds the tail, not the stream
    const log = join(home, 'sessions', `${sessionIdOf(big.stderr)}.jsonl`)
    expect(statSync(log).size).toBeLessThan(2_000_000)
  })
})
