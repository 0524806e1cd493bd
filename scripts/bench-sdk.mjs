// Benchmarks of `dsh sdk` (run after `npm run build`): node scripts/bench-sdk.mjs [--runs N]
//  1. spawn → `initialize` answered (a fresh `dsh sdk` process each run; DESIGN.md §7: ≤ 150 ms)
//  2. 20 concurrent sessions × 3 tool steps in one server, through the TypeScript client,
//     against the testkit's mock model (answers instantly): wall time from the first
//     session/create to the last turn/end (target ≤ 1.2 s). The mock's script is global, so
//     the 60 tool steps (bash `true`, sandboxed) spread over the sessions in arrival order;
//     the min–max tool steps per session is printed with each run.
//  3. EOF on stdin while a turn runs a sandboxed `sleep` → the process has exited (≤ 2 s).
// Prints a table of medians and min–max. A benchmark, not a test: nothing is asserted.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const dshBin = join(root, 'packages/cli/bin/dsh.js')
const { startMockModel } = await import(join(root, 'packages/testkit/dist/index.js'))
const { createClient } = await import(join(root, 'packages/sdk/dist/index.js'))

const runsArg = process.argv.indexOf('--runs')
const RUNS = Number(runsArg > 0 ? process.argv[runsArg + 1] : process.env.BENCH_RUNS ?? 10)
const SESSIONS = 20
const STEPS = 3

const model = await startMockModel()
const temp = (prefix) => mkdtempSync(join(tmpdir(), prefix))
const cleanEnv = (home) => {
  const env = {}
  for (const [k, v] of Object.entries(process.env)) if (!/^(DSH_|DEEPSEEK_|OPENAI_|ANTHROPIC_)/.test(k)) env[k] = v
  return { ...env, DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'bench' }
}

/** ms from spawn to the initialize answer on stdout; then EOF and wait for the exit. */
function initializeOnce(home) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [dshBin, 'sdk'], { env: cleanEnv(home), stdio: ['pipe', 'pipe', 'ignore'] })
    let buffered = ''
    let answered
    child.stdout.setEncoding('utf8').on('data', (d) => {
      buffered += d
      if (answered === undefined && buffered.includes('"id":1,')) {
        answered = performance.now() - started
        child.stdin.end()
      }
    })
    child.on('error', reject)
    child.on('close', () => (answered === undefined ? reject(new Error('no initialize answer')) : resolve(answered)))
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, client: { name: 'bench', version: '1' } } })}\n`)
  })
}

/** ms from EOF on stdin (while a sandboxed `sleep` runs in a turn) to the process's exit. */
function eofExitOnce(home) {
  model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 30' } }] }])
  const workspace = temp('dsh-bench-sdk-ws-')
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [dshBin, 'sdk'], { env: cleanEnv(home), stdio: ['pipe', 'pipe', 'ignore'] })
    const send = (id, method, params) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    let buffered = ''
    let eofAt
    child.stdout.setEncoding('utf8').on('data', (d) => {
      buffered += d
      let nl
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const msg = JSON.parse(buffered.slice(0, nl))
        buffered = buffered.slice(nl + 1)
        if (msg.id === 1) send(2, 'session/create', { workspace })
        else if (msg.id === 2) send(3, 'session/prompt', { sessionId: msg.result.session.id, prompt: 'sleep' })
        else if (msg.method === 'session/event' && msg.params.event.type === 'tool/call' && eofAt === undefined) {
          setTimeout(() => { eofAt = performance.now(); child.stdin.end() }, 100)
        }
      }
    })
    child.on('error', reject)
    child.on('close', () => {
      rmSync(workspace, { recursive: true, force: true })
      return eofAt === undefined ? reject(new Error('the turn never started')) : resolve(performance.now() - eofAt)
    })
    send(1, 'initialize', { protocolVersion: 1, client: { name: 'bench', version: '1' } })
  })
}

async function concurrentOnce(home) {
  const bash = { toolCalls: [{ name: 'bash', arguments: { command: 'true' } }] }
  model.setScript([...Array(SESSIONS * STEPS).fill(bash), ...Array(SESSIONS).fill({ text: 'done' })])
  model.requests.length = 0
  const client = await createClient({ command: process.execPath, args: [dshBin, 'sdk'], env: cleanEnv(home) })
  try {
    const workspaces = Array.from({ length: SESSIONS }, () => temp('dsh-bench-sdk-ws-'))
    const started = performance.now()
    const sessions = await Promise.all(workspaces.map((workspace) => client.createSession({ workspace })))
    const results = await Promise.all(sessions.map((s) => s.run('run the steps')))
    const ms = performance.now() - started
    const bad = results.filter((r) => r.reason !== 'completed')
    if (bad.length) throw new Error(`${bad.length} turns did not complete: ${bad[0].reason}`)
    const steps = results.map((r) => r.events.filter((e) => e.type === 'tool/result').length)
    for (const w of workspaces) rmSync(w, { recursive: true, force: true })
    return { ms, spread: `${Math.min(...steps)}–${Math.max(...steps)}` }
  } finally {
    await client.close()
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const fmt = (xs) => `${median(xs).toFixed(0)} ms (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`

const home = temp('dsh-bench-sdk-home-')
try {
  await initializeOnce(home) // warm-up: creates the sdk profile
  const init = []
  for (let i = 0; i < RUNS; i++) init.push(await initializeOnce(home))
  await concurrentOnce(home)
  const conc = []
  const spreads = []
  for (let i = 0; i < Math.max(3, Math.ceil(RUNS / 2)); i++) {
    const r = await concurrentOnce(home)
    conc.push(r.ms)
    spreads.push(r.spread)
  }
  const eof = []
  for (let i = 0; i < Math.max(3, Math.ceil(RUNS / 2)); i++) eof.push(await eofExitOnce(home))
  console.log('| figure | target | median (min–max) | runs |')
  console.log('|---|---|---|---|')
  console.log(`| dsh sdk: spawn → initialize answered | ≤ 150 ms | ${fmt(init)} | ${init.length} |`)
  console.log(`| dsh sdk: ${SESSIONS} concurrent sessions × ${STEPS} tool steps | ≤ 1.2 s | ${fmt(conc)} | ${conc.length} (tool steps per session: ${spreads.join(', ')}) |`)
  console.log(`| dsh sdk: EOF mid-turn (a running sleep) → process exit | ≤ 2 s | ${fmt(eof)} | ${eof.length} |`)
} finally {
  rmSync(home, { recursive: true, force: true })
  await model.close()
}
