// `npm run bench`: medians over N runs (default 10; `--runs N` or BENCH_RUNS) of the
// wall time and peak RSS of dsh commands, each in a fresh process with a temp
// DSH_HOME. Prints a table and writes bench-results/latest.json. A benchmark, not a
// test: nothing is asserted. Add a case by appending to CASES:
//   { name, args: string[], target?: string, setup?(ctx) => void | Promise<void>, env?: {} }
// where ctx = { home, env, root } (setup runs once, before a warm-up run).
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const dshBin = join(root, 'packages/cli/bin/dsh.js')

// Agent runs talk to the testkit's scripted mock model (it answers instantly), so their
// wall time is dsh's own overhead plus tool execution.
const { clientStepCosts, cpuMs, cpuStepCosts, firstChild, longSessionLog, rssKb, startMockModel, STEP_WINDOWS, stepCosts, treeRssKb } = await import(join(root, 'packages/testkit/dist/index.js'))
// dsh's CPU time (all its threads) as each model request arrives: the per-step CPU figure
const running = { pid: 0, viaTime: false, dsh: 0, cpu: [] }
const model = await startMockModel({
  onRequest: () => {
    if (!running.dsh) running.dsh = (running.viaTime ? firstChild(running.pid) : running.pid) ?? 0
    running.cpu.push(running.dsh ? cpuMs(running.dsh) : Number.NaN)
  },
})
const modelEnv = { DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'bench', ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'bench' }
/** A script of `calls` bash steps (`true`), then a final answer. */
const stepsScript = (calls) => [
  ...Array.from({ length: calls }, (_, i) => ({ toolCalls: [{ name: 'bash', arguments: { command: 'true', description: `step ${i + 1}` } }] })),
  { text: 'done' },
]
const agentCase = (name, calls, target, runs, extraArgs = []) => ({
  name, args: ['--profile', 'headless', ...extraArgs, 'run the steps'], env: modelEnv, target, runs,
  // long sessions need more steps per turn than the default bound
  setup: ({ home }) => writeFileSync(join(home, 'cordis.patch.yml'), '- id: agent\n  config: {maxSteps: 5000}\n'),
  beforeEach: () => { model.setScript(stepsScript(calls)); model.requests.length = 0; running.cpu.length = 0 },
  afterEach: (result) => {
    // the mock serves both wires; a case run with --provider anthropic must have spoken Anthropic
    const wire = extraArgs.includes('anthropic') ? '/v1/messages' : '/chat/completions'
    if (model.requests[0] && model.requests[0].path !== wire) throw new Error(`${name}: requests went to ${model.requests[0].path}, not ${wire}`)
    result.firstRequestBytes = Buffer.byteLength(JSON.stringify(model.requests[0]?.body ?? {}))
    if (model.requests[0]) result.firstRequestMs = model.requests[0].time - result.startedAt
    // stepMs spans request receipts (the mock's parse of a growing body included: the figure
    // before 0093); clientStepMs is dsh's share alone; cpuStepMs dsh's CPU per step
    result.stepMs = stepCosts(model.requests)
    result.clientStepMs = clientStepCosts(model.requests)
    result.cpuStepMs = cpuStepCosts(running.cpu)
  },
})

/**
 * A one-shot that resumes a stored session of `events` events (testkit's longSessionLog,
 * compacted every 50 turns as a real long session would be): start → first request is the
 * load + derive + the request; compare it with the fresh one-shot's.
 */
const resumeCase = (name, events) => ({
  name, args: ['--profile', 'headless', '--resume', 'long-session', 'one more step'], env: modelEnv, target: 'fresh one-shot + load',
  setup: ({ home }) => {
    const cwd = join(home, 'workspace')
    mkdirSync(join(home, 'sessions'), { recursive: true })
    mkdirSync(cwd)
    writeFileSync(join(home, 'sessions', 'long-session.jsonl'), longSessionLog(events, { id: 'long-session', cwd, compactEvery: 50 }))
  },
  beforeEach: () => { model.setScript([{ text: 'done' }]); model.requests.length = 0 },
  afterEach: (result) => {
    if (model.requests[0]) result.firstRequestMs = model.requests[0].time - result.startedAt
  },
})

export const CASES = [
  { name: 'dsh --help', args: ['--help'], target: '≤ 60 ms' },
  { name: 'dsh --version', args: ['--version'], target: '≤ 60 ms' },
  { name: 'dsh --profile headless --dump-config', args: ['--profile', 'headless', '--dump-config'] },
  agentCase('headless one-shot, 3 tool calls', 3, '1st request ≤ 120 ms; ≤ 80 MB tree'),
  agentCase('headless 20 steps', 19),
  agentCase('headless 200 steps', 199, undefined, 5),
  agentCase('headless 1000 steps', 999, '≤ 12 ms/step, flat', 3),
  // the default headless mode runs bash in bubblewrap; this is the same without it
  agentCase('headless 200 steps, no sandbox', 199, undefined, 5, ['--permission-mode', 'danger-full-access']),
  agentCase('headless 1000 steps, no sandbox', 999, '≤ 10% growth 10→1000, ≤ 100 MB', 3, ['--permission-mode', 'danger-full-access']),
  agentCase('headless 1000 steps, no sandbox, anthropic', 999, '≤ 10% growth 10→1000', 3, ['--permission-mode', 'danger-full-access', '--provider', 'anthropic']),
  resumeCase('headless one-shot resuming a 100,000-event session', 100_000),
]

const runsArg = process.argv.indexOf('--runs')
const RUNS = Number(runsArg > 0 ? process.argv[runsArg + 1] : process.env.BENCH_RUNS ?? 10)
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined

/**
 * One run: wall ms, the peak RSS of the dsh process (/usr/bin/time %M when present, which
 * counts one process), and the peak of the whole process tree's summed RSS (dsh + sandbox +
 * commands), sampled every 2 ms from /proc.
 */
function once(args, env, scratch) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const startedAt = Date.now()
    const rssFile = join(scratch, 'rss')
    const child = TIME
      ? spawn(TIME, ['-f', '%M %U %S', '-o', rssFile, process.execPath, dshBin, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] })
      : spawn(process.execPath, [dshBin, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] })
    let peak = 0
    let treePeak = 0
    let stderr = ''
    child.stderr.on('data', (d) => { stderr += d })
    Object.assign(running, { pid: child.pid, viaTime: !!TIME, dsh: 0 })
    let pruned = 1
    const poll = setInterval(() => {
      // the mock keeps every request; only the first body is read, so the others are dropped as
      // they come (holding 1,000 parsed bodies, ~125 MB, slowed the mock's own steps as they grew)
      for (; pruned < model.requests.length; pruned++) model.requests[pruned].body = null
      // under /usr/bin/time the tree starts at time's child; time itself is ~2 MB and not dsh
      treePeak = Math.max(treePeak, treeRssKb(child.pid) - (TIME ? rssKb(child.pid) : 0))
      if (TIME) return
      try {
        const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))
        if (m) peak = Math.max(peak, Number(m[1]))
      } catch { /* gone */ }
    }, 2)
    child.on('error', reject)
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6
      clearInterval(poll)
      // with /usr/bin/time: peak RSS and the CPU seconds of dsh and the children it reaped (load-independent, unlike wall time)
      let runCpuMs
      if (TIME) {
        const [m, user, sys] = readFileSync(rssFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number)
        peak = m
        runCpuMs = (user + sys) * 1000
      }
      resolve({ ms, startedAt, rssKb: peak, treeKb: Math.max(treePeak, peak), cpuMs: runCpuMs, code, stderr })
    })
  })
}

function median(values) {
  const s = [...values].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

async function bench(c) {
  const scratch = mkdtempSync(join(tmpdir(), 'dsh-bench-'))
  const home = join(scratch, 'home')
  mkdirSync(home)
  // BENCH_NODE_OPTIONS: node flags for the measured dsh (an A/B of e.g. a heap setting);
  // BENCH_PATH: its PATH (an A/B of e.g. a PATH without perl: the spawner's fallback, 0080)
  const env = { PATH: process.env.BENCH_PATH ?? process.env.PATH, HOME: scratch, DSH_HOME: home, ...c.env, ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}) }
  try {
    await c.setup?.({ home, env, root })
    const run = async () => {
      await c.beforeEach?.()
      const result = await once(c.args, env, scratch)
      await c.afterEach?.(result)
      return result
    }
    const warm = await run() // creates templates, warms the disk cache
    if (warm.code !== 0) throw new Error(`${c.name} exited ${warm.code}: ${warm.stderr}`)
    const runs = []
    const n = c.runs ?? RUNS
    for (let i = 0; i < n; i++) runs.push(await run())
    const firsts = runs.map((r) => r.firstRequestMs).filter((v) => v !== undefined)
    const perStep = (key) => {
      const out = {}
      for (const at of Object.keys(STEP_WINDOWS)) {
        const v = runs.map((r) => r[key]?.[at]).filter((x) => x !== undefined && !Number.isNaN(x))
        if (v.length) out[at] = stats(v)
      }
      return out
    }
    const stepMs = perStep('stepMs')
    const clientStepMs = perStep('clientStepMs')
    const cpuStepMs = perStep('cpuStepMs')
    return {
      name: c.name, runs: n, target: c.target ?? null,
      ...(firsts.length ? { firstRequestMs: stats(firsts) } : {}),
      ...(Object.keys(stepMs).length ? { stepMs, clientStepMs, cpuStepMs } : {}),
      ...(warm.firstRequestBytes ? { firstRequestBytes: warm.firstRequestBytes } : {}),
      ...(runs[0].cpuMs !== undefined ? { cpuMs: stats(runs.map((r) => r.cpuMs)) } : {}),
      wallMs: { median: round(median(runs.map((r) => r.ms))), min: round(Math.min(...runs.map((r) => r.ms))), max: round(Math.max(...runs.map((r) => r.ms))) },
      peakRssMb: { median: round(median(runs.map((r) => r.rssKb)) / 1024), max: round(Math.max(...runs.map((r) => r.rssKb)) / 1024) },
      peakTreeRssMb: { median: round(median(runs.map((r) => r.treeKb)) / 1024), max: round(Math.max(...runs.map((r) => r.treeKb)) / 1024) },
      failures: runs.filter((r) => r.code !== 0).length,
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

function stats(values) {
  return { median: round(median(values)), min: round(Math.min(...values)), max: round(Math.max(...values)) }
}

function round(n) {
  return Math.round(n * 10) / 10
}

// BENCH_ONLY=substring runs only the matching cases (the summary lines need all of them).
const only = process.env.BENCH_ONLY
const results = []
for (const c of CASES) if (!only || c.name.includes(only)) results.push(await bench(c))
await model.close()

// Per-step overhead: the slope between step counts (model round trip + bash + durable append).
const byName = Object.fromEntries(results.map((r) => [r.name, r]))
const slope = (a, b, steps) => (byName[a] && byName[b] ? round((byName[b].wallMs.median - byName[a].wallMs.median) / steps) : null)
const perStep = {
  '20→200': slope('headless 20 steps', 'headless 200 steps', 180),
  '200→1000': slope('headless 200 steps', 'headless 1000 steps', 800),
}

// Load + derive a 100,000-event session (in-process, median of 9).
const loadDerive = await new Promise((resolve, reject) => {
  const child = spawn(process.execPath, [join(root, 'packages/persistence/bench/load-derive.mjs'), '100000', '9'], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d) => { out += d })
  child.on('error', reject)
  child.on('close', () => resolve(JSON.parse(out.trim().split('\n').at(-1))))
})

const range = (s) => (s ? `${s.median} (${s.min}–${s.max})` : '')
const rows = [['case', 'wall median', 'min', 'max', 'CPU ms', 'start→1st request ms', 'peak RSS (dsh)', 'peak RSS (tree)', 'target', 'failures'],
  ...results.map((r) => [r.name, `${r.wallMs.median} ms`, `${r.wallMs.min}`, `${r.wallMs.max}`, range(r.cpuMs), range(r.firstRequestMs), `${r.peakRssMb.median} MB`, `${r.peakTreeRssMb.median} MB`, r.target ?? '', String(r.failures)])]
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
for (const r of rows) console.log(r.map((cell, i) => cell.padEnd(widths[i])).join('  '))

console.log(`\nper extra tool step (median slope): 20→200: ${perStep['20→200']} ms, 200→1000: ${perStep['200→1000']} ms (target ≤ 15 ms, flat; from whole-run walls, so the mock's work is in it)`)
// dsh's ms per step: from the mock's answer to dsh's next request (the mock's own work, which
// grows with the body it parses, left out); "with the mock" is the receipt-to-receipt figure
const FIGURES = [['clientStepMs', 'dsh ms per step'], ['stepMs', 'ms per step with the mock'], ['cpuStepMs', 'dsh CPU ms per step']]
for (const r of results) {
  for (const [key, label] of FIGURES) {
    if (!r[key] || !Object.keys(r[key]).length) continue
    console.log(`${label} in ${r.name}, median (min–max): ${Object.entries(r[key]).map(([at, v]) => `at ${at}: ${range(v)}`).join(', ')}`)
  }
}
for (const r of results) {
  for (const [key, label] of FIGURES) {
    if (!r[key]?.[10] || !r[key]?.[1000]) continue
    console.log(`growth of ${label} in ${r.name}, step 10 → 1000 (medians): ${round((r[key][1000].median / r[key][10].median - 1) * 100)} %${key === 'clientStepMs' ? ' (target ≤ 10 %)' : ''}`)
  }
}
const fresh = byName['headless one-shot, 3 tool calls']?.firstRequestMs
const resumed = byName['headless one-shot resuming a 100,000-event session']?.firstRequestMs
if (fresh && resumed) console.log(`start → first request: fresh one-shot ${range(fresh)} ms, resuming a 100,000-event session ${range(resumed)} ms (target: fresh + load)`)
console.log(`first model request (one-shot): ${byName['headless one-shot, 3 tool calls']?.firstRequestBytes} bytes (target ≤ 12 KB)`)
console.log(`load + derive ${loadDerive.events} events: median ${loadDerive.medianMs} ms (target ≤ 150 ms)`)

const out = join(root, 'bench-results')
mkdirSync(out, { recursive: true })
writeFileSync(join(out, 'latest.json'), `${JSON.stringify({ date: new Date().toISOString(), node: process.version, runs: RUNS, rss: TIME ? '/usr/bin/time %M' : '/proc VmHWM', results, perStepMs: perStep, loadDerive }, null, 2)}\n`)
console.log(`\nwrote ${join('bench-results', 'latest.json')}`)
