// What the benchmarks' per-step figures mean: `stepCosts` spans request receipts (the mock's own
// work included), `clientStepCosts` only the client's share, from the mock's stamps.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { clientStepCosts, cpuMs, cpuStepCosts, firstChild, startMockModel, STEP_WINDOWS, stepCosts, type MockModel, type RecordedRequest } from '@dsh/testkit'

let mock: MockModel
let seen: RecordedRequest[]

beforeEach(async () => {
  seen = []
  mock = await startMockModel({ onRequest: (r) => { seen.push({ ...r }) } })
})
afterEach(async () => {
  await mock.close()
})

const clock = () => performance.timeOrigin + performance.now()
const body = (text: string) => JSON.stringify({
  model: 'm', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: text }],
})

describe('the mock model stamps each request', () => {
  it('receivedAt after the client sent, answeredAt after it and before the client read the whole answer', async () => {
    mock.setScript([{ text: 'one two three four five', chunkSize: 4, delayMs: 5 }])
    const sent = clock()
    const res = await fetch(`${mock.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body('hi') })
    const answer = await res.text()
    const read = clock()
    const [r] = mock.requests
    expect(answer).toContain('[DONE]')
    expect(r!.receivedAt).toBeGreaterThanOrEqual(sent)
    expect(r!.answeredAt).toBeGreaterThanOrEqual(r!.receivedAt)
    expect(r!.answeredAt).toBeLessThanOrEqual(read)
    // onRequest ran as the request was recorded: before the answer was written
    expect(seen).toHaveLength(1)
    expect(seen[0]!.answeredAt).toBeUndefined()
    expect(seen[0]!.receivedAt).toBe(r!.receivedAt)
  })

  it('leaves answeredAt unset for an answer that never ends', async () => {
    mock.setScript([{ fault: 'stall', text: 'thinking' }])
    const controller = new AbortController()
    const res = await fetch(`${mock.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body('hi'), signal: controller.signal })
    const reader = res.body!.getReader()
    await reader.read()
    expect(mock.requests[0]!.receivedAt).toBeGreaterThan(0)
    expect(mock.requests[0]!.answeredAt).toBeUndefined()
    controller.abort()
  })

  it('estimates input tokens from the length of the body text (chars / 4)', async () => {
    mock.setScript([{ text: 'ok' }])
    const text = body('x'.repeat(1001))
    const res = await fetch(`${mock.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text })
    const usage = (await res.text()).split('\n').filter((l) => l.includes('"usage"')).map((l) => JSON.parse(l.slice(6)) as { usage: { prompt_tokens: number } })
    expect(usage.at(-1)!.usage.prompt_tokens).toBe(Math.ceil(text.length / 4))
  })
})

describe('stepCosts and clientStepCosts', () => {
  /** A run of n requests: the client takes `client` ms between an answer and the next request, the mock `mock(i)` ms on request i. */
  function run(n: number, client: number, mock: (i: number) => number) {
    const out: { time: number; receivedAt: number; answeredAt: number }[] = []
    let t = 0
    for (let i = 0; i < n; i++) {
      const receivedAt = t
      const answeredAt = receivedAt + mock(i)
      out.push({ time: receivedAt, receivedAt, answeredAt })
      t = answeredAt + client
    }
    return out
  }

  it('a mock that slows as bodies grow shows in stepCosts, not in clientStepCosts', () => {
    const requests = run(1001, 6, (i) => 0.5 + i / 500)
    const client = clientStepCosts(requests)
    const both = stepCosts(requests)
    expect(Object.keys(client)).toEqual(Object.keys(STEP_WINDOWS))
    for (const at of Object.keys(STEP_WINDOWS)) expect(client[at]).toBeCloseTo(6, 9)
    expect(both['1000']! - both['10']!).toBeCloseTo((979 - 10) / 500, 6)
  })

  it('leaves out windows the run does not reach, and is NaN (not a number that looks right) when an answer has no stamp', () => {
    const requests: { time: number; receivedAt: number; answeredAt?: number }[] = run(50, 6, () => 1)
    expect(Object.keys(clientStepCosts(requests))).toEqual(['10'])
    delete requests[12]!.answeredAt
    expect(clientStepCosts(requests)['10']).toBeNaN()
  })
})

describe('cpuMs, firstChild, cpuStepCosts', () => {
  it('reads a process\'s CPU time from /proc (it grows while the process computes; 0 once it is gone)', async () => {
    const before = cpuMs(process.pid)
    let x = 0
    for (let i = 0; i < 5e7; i++) x += i % 7
    expect(x).toBeGreaterThan(0)
    expect(cpuMs(process.pid)).toBeGreaterThan(before)
    // a shell whose only child is `sleep` (as /usr/bin/time's only child is dsh)
    const shell = spawn('sh', ['-c', 'sleep 30 & wait'], { detached: true })
    await once(shell, 'spawn')
    let sleeper: number | undefined
    // the child is `sh` between its fork and its exec of sleep: wait for the exec
    const comm = (pid: number | undefined) => { try { return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() } catch { return undefined } }
    for (let i = 0; i < 500 && comm(sleeper) !== 'sleep'; i++) {
      sleeper = firstChild(shell.pid!)
      if (comm(sleeper) !== 'sleep') await new Promise((r) => setTimeout(r, 10))
    }
    expect(readFileSync(`/proc/${sleeper}/comm`, 'utf8').trim()).toBe('sleep')
    expect(firstChild(sleeper!)).toBeUndefined()
    process.kill(-shell.pid!, 'SIGKILL')
    await once(shell, 'close')
    expect(cpuMs(shell.pid!)).toBe(0)
  })

  it('is the mean CPU per step over each window the samples reach', () => {
    const cpu = Array.from({ length: 130 }, (_, i) => 100 + i * 4 + (i >= 100 ? (i - 100) * 2 : 0))
    expect(cpuStepCosts(cpu)).toEqual({ 10: 4, 100: 6 })
  })
})
