// dsh side by side with codex (issue 13 "Checked by"): the same scripted run — N calls of
// each one's shell tool running `true`, then an answer — against the testkit mock model (dsh
// over chat completions, codex over the Responses API), in one interleaved run of pairs (the
// order alternates every pair), each a fresh process with its own temp home and an empty
// workspace. Per case and tool: start → first model request (the mock's receipt time), wall
// time, peak RSS of the main process (/usr/bin/time %M when present) and of the whole process
// tree (summed VmRSS sampled every 2 ms from /proc, as bench.mjs does), ms per step at steps
// 10/100/1000 (testkit's STEP_WINDOWS, as bench.mjs); medians (min–max) and the ratios dsh/codex. Prints a
// table, writes bench-results/codex.json. A benchmark: nothing is asserted, but a run whose
// commands did not all succeed counts as a failure.
//   CODEX_BIN=/path/to/codex node scripts/bench-codex.mjs [--runs N] [--long-runs N] [--runs-1000 N] [--modes unsandboxed,sandboxed]
// Without CODEX_BIN it prints "skipped: set CODEX_BIN" and exits 0. Modes: unsandboxed = dsh
// --permission-mode danger-full-access vs codex --dangerously-bypass-approvals-and-sandbox;
// sandboxed = each one's default (dsh workspace-write in bubblewrap; codex exec read-only, its
// bubblewrap + seccomp helper); also workspace-write and read-only (that preset on both sides).
// --long-runs: pairs of the 200- and 1000-step cases (default 3; 0 skips them), --runs-1000
// overrides it for the 1000-step case. Each finished case is printed and written at once.
// codex's home holds a config.toml with a `mock` model provider (wire_api "responses") and
// analytics and plugins off: offline, codex otherwise runs `git ls-remote` on github.com,
// resolves api.github.com and chatgpt.com, and waits ~5 s at exit for an analytics upload.
// As root with unshare(1), the whole run is re-executed in a loopback-only network namespace
// (BENCH_CODEX_NETNS=0: not), so nothing can leave the machine either way.
import { spawn, spawnSync } from 'node:child_process'
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { flag } from './bench-args.mjs'

const CODEX_BIN = process.env.CODEX_BIN
if (!CODEX_BIN) {
  console.log('skipped: set CODEX_BIN (the codex binary, e.g. from `npm pack @openai/codex@0.171.0-linux-x64`)')
  process.exit(0)
}
try {
  accessSync(CODEX_BIN, constants.X_OK)
} catch {
  console.error(`bench-codex: CODEX_BIN=${CODEX_BIN} is not an executable file`)
  process.exit(2)
}

const root = fileURLToPath(new URL('..', import.meta.url))
const dshBin = join(root, 'packages/cli/bin/dsh.js')
const arg = flag
const usage = (message) => {
  console.error(`bench-codex: ${message}`)
  process.exit(2)
}
const count = (name, dflt, min) => {
  const raw = arg(name, dflt)
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min) usage(`${name}: expected an integer ≥ ${min}, got "${raw}"`)
  return n
}
const RUNS = count('--runs', process.env.BENCH_RUNS ?? '10', 1)
const LONG_RUNS = count('--long-runs', '3', 0)
const RUNS_1000 = count('--runs-1000', String(LONG_RUNS), 0)
const MODE_ARGS = {
  unsandboxed: { dsh: ['--permission-mode', 'danger-full-access'], codex: ['--dangerously-bypass-approvals-and-sandbox'] },
  sandboxed: { dsh: [], codex: [] },
  // the same preset on both sides (not run unless asked for with --modes)
  'workspace-write': { dsh: [], codex: ['--sandbox', 'workspace-write'] },
  'read-only': { dsh: ['--permission-mode', 'read-only'], codex: ['--sandbox', 'read-only'] },
}
const MODES = arg('--modes', 'unsandboxed,sandboxed').split(',')
for (const m of MODES) if (!MODE_ARGS[m]) usage(`--modes: unknown mode "${m}" (accepted: ${Object.keys(MODE_ARGS).join(', ')})`)

// Loopback only: re-execute inside a fresh network namespace when we may.
const NETNS_MARK = 'BENCH_CODEX_IN_NETNS'
if (!process.env[NETNS_MARK] && process.env.BENCH_CODEX_NETNS !== '0' && process.getuid?.() === 0
  && spawnSync('unshare', ['-n', 'true']).status === 0 && spawnSync('ip', ['-V']).status === 0) {
  // unshare and sh exec, so the child's pid ends up being the inner node's: signals go on to it
  const inner = spawn('unshare', ['-n', '--', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, ...process.argv.slice(1)],
    { stdio: 'inherit', env: { ...process.env, [NETNS_MARK]: '1' } })
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => inner.kill(signal))
  await new Promise(() => inner.on('close', (code) => process.exit(code ?? 130)))
}

const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined
const codexVersion = spawnSync(CODEX_BIN, ['--version'], { encoding: 'utf8' }).stdout.trim()
const loadBefore = loadavg()

const { rssKb, startMockModel, STEP_WINDOWS, stepCosts, treeRssKb } = await import(join(root, 'packages/testkit/dist/index.js'))
const model = await startMockModel()

// codex refuses to create its sandbox helper links in a home under the temp dir (then every
// sandboxed command fails "execvp codex-linux-sandbox"), so the homes live in /var/tmp.
const base = existsSync('/var/tmp') && !'/var/tmp/'.startsWith(`${tmpdir()}/`) ? '/var/tmp' : join(root, 'bench-results')
mkdirSync(base, { recursive: true })
const scratch = mkdtempSync(join(base, 'dsh-bench-codex-'))
let running // the measured child (its own process group), while one runs
const cleanUp = () => {
  rmSync(scratch, { recursive: true, force: true, maxRetries: 5 })
  process.exit(130)
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (!running) return cleanUp()
    running.once('close', cleanUp)
    try {
      process.kill(-running.pid, 'SIGKILL')
    } catch { /* already gone */ }
  })
}

/** Token counts are fixed so that neither harness compacts; they are not what is measured. */
const USAGE = { input: 100, output: 10 }
const script = (calls, call) => [
  ...Array.from({ length: calls }, (_, i) => ({ toolCalls: [call(i)], usage: USAGE })),
  { text: 'done', usage: USAGE },
]


function dshTool(name) {
  const user = join(scratch, name, 'user')
  const home = join(user, '.dsh')
  const cwd = join(scratch, name, 'ws')
  mkdirSync(home, { recursive: true })
  mkdirSync(cwd)
  // long sessions need more steps per turn than the default bound (as bench.mjs)
  writeFileSync(join(home, 'cordis.patch.yml'), '- id: agent\n  config: {maxSteps: 5000}\n')
  return {
    name: 'dsh', cwd,
    env: { PATH: process.env.PATH, HOME: user, DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'bench' },
    argv: (mode) => [process.execPath, dshBin, '--profile', 'headless', ...MODE_ARGS[mode].dsh, 'run the steps'],
    call: (i) => ({ name: 'bash', arguments: { command: 'true', description: `step ${i + 1}` } }),
    /** Tool results of the last request: chat-completions `tool` messages. */
    results: (body) => (body.messages ?? []).filter((m) => m.role === 'tool').map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))),
    ok: (result) => result === '(no output)', // what dsh's bash returns for a silent exit 0
  }
}

function codexTool(name) {
  const user = join(scratch, name, 'user')
  const home = join(user, '.codex')
  const cwd = join(scratch, name, 'ws')
  mkdirSync(home, { recursive: true })
  mkdirSync(cwd)
  writeFileSync(join(home, 'config.toml'), [
    'model = "mock-model"',
    'model_provider = "mock"',
    '[model_providers.mock]',
    'name = "mock"',
    `base_url = "${model.url}/v1"`,
    'wire_api = "responses"',
    'env_key = "MOCK_API_KEY"',
    '[analytics]',
    'enabled = false',
    '[features]',
    'plugins = false',
    '',
  ].join('\n'))
  const tool = {
    name: 'codex', cwd, shellTool: undefined,
    env: { PATH: process.env.PATH, HOME: user, CODEX_HOME: home, MOCK_API_KEY: 'bench' },
    argv: (mode) => [CODEX_BIN, 'exec', '--skip-git-repo-check', '--json', ...MODE_ARGS[mode].codex, 'run the steps'],
    call: (i) => ({ id: `call_${i + 1}`, ...SHELL_CALLS[tool.shellTool] }),
    results: (body) => (body.input ?? []).filter((item) => item.type === 'function_call_output').map((item) => (typeof item.output === 'string' ? item.output : JSON.stringify(item.output))),
    ok: (result) => /\bexited with code 0\b|"exit_code":\s*0\b|\bExit code: 0\b/.test(result),
  }
  return tool
}

/** The shell tools codex may declare, and a call of each that runs `true`. */
const SHELL_CALLS = {
  exec_command: { name: 'exec_command', arguments: { cmd: 'true' } },
  shell_command: { name: 'shell_command', arguments: { command: 'true' } },
  shell: { name: 'shell', arguments: { command: ['bash', '-lc', 'true'] } },
}


/** One run of `tool` with `calls` shell steps: timings, peaks, and whether every command succeeded. */
function once(tool, mode, calls) {
  model.setScript(script(calls, tool.call))
  model.requests.length = 0
  model.failures.length = 0
  const rssFile = join(scratch, `${tool.name}.rss`)
  const argv = tool.argv(mode)
  return new Promise((resolve, reject) => {
    const startedAt = Date.now()
    const started = process.hrtime.bigint()
    const child = TIME
      ? spawn(TIME, ['-f', '%M', '-o', rssFile, ...argv], { cwd: tool.cwd, env: tool.env, stdio: ['ignore', 'ignore', 'pipe'], detached: true })
      : spawn(argv[0], argv.slice(1), { cwd: tool.cwd, env: tool.env, stdio: ['ignore', 'ignore', 'pipe'], detached: true })
    running = child
    let treePeak = 0
    let ownPeak = 0
    let stderr = ''
    let pruned = 0
    child.stderr.on('data', (d) => { stderr += d })
    const poll = setInterval(() => {
      // the mock keeps every request; only the first and last bodies are read (a 1000-step codex
      // run would otherwise hold ~200 MB of them in this process)
      for (; pruned < model.requests.length - 1; pruned++) if (pruned > 0) model.requests[pruned].body = null
      // under /usr/bin/time the tree starts at time's child; time itself (~2 MB) is not counted
      treePeak = Math.max(treePeak, treeRssKb(child.pid) - (TIME ? rssKb(child.pid) : 0))
      if (!TIME) ownPeak = Math.max(ownPeak, rssKb(child.pid))
    }, 2)
    child.on('error', reject)
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6
      running = undefined
      clearInterval(poll)
      const ownKb = TIME ? Number(readFileSync(rssFile, 'utf8').trim().split('\n').at(-1)) : ownPeak
      const requests = model.requests
      const results = requests.length ? tool.results(requests.at(-1).body) : []
      const problems = []
      if (code !== 0) problems.push(`exit ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`)
      if (requests.length !== calls + 1) problems.push(`${requests.length} model requests, expected ${calls + 1}`)
      if (results.length !== calls) problems.push(`${results.length} tool results, expected ${calls}`)
      const bad = results.find((r) => !tool.ok(r))
      if (bad !== undefined) problems.push(`a command failed: ${bad.slice(0, 200)}`)
      if (model.failures.length) problems.push(`mock: ${model.failures[0]}`)
      resolve({
        ms, rssKb: ownKb, treeKb: Math.max(treePeak, ownKb), problems,
        firstRequestMs: requests[0] ? requests[0].time - startedAt : undefined,
        stepMs: stepCosts(requests),
        firstRequestBytes: requests[0] ? Buffer.byteLength(JSON.stringify(requests[0].body)) : undefined,
      })
    })
  })
}

/** Which shell tool this codex declares: one text-only run, its first request's tools. */
async function probeCodexShell(tool) {
  model.setScript([{ text: 'done', usage: USAGE }])
  model.requests.length = 0
  await new Promise((resolve, reject) => {
    const [cmd, ...args] = tool.argv('sandboxed')
    const child = spawn(cmd, args, { cwd: tool.cwd, env: tool.env, stdio: 'ignore', detached: true })
    running = child
    child.on('error', reject)
    child.on('close', () => {
      running = undefined
      resolve()
    })
  })
  const offered = (model.requests[0]?.body.tools ?? []).map((t) => t.name ?? t.type)
  const shell = Object.keys(SHELL_CALLS).find((name) => offered.includes(name))
  if (!shell) throw new Error(`codex offered no shell tool this script knows (offered: ${offered.join(', ') || 'no request made'}; known: ${Object.keys(SHELL_CALLS).join(', ')})`)
  return { shell, offered }
}

function median(values) {
  const s = [...values].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}
const round = (n) => Math.round(n * 10) / 10
function stats(values) {
  const v = values.filter((x) => x !== undefined)
  return v.length ? { median: round(median(v)), min: round(Math.min(...v)), max: round(Math.max(...v)) } : undefined
}

function summarise(runs) {
  const stepMs = {}
  for (const at of Object.keys(STEP_WINDOWS)) {
    const s = stats(runs.map((r) => r.stepMs[at]))
    if (s) stepMs[at] = s
  }
  return {
    runs: runs.length,
    firstRequestMs: stats(runs.map((r) => r.firstRequestMs)),
    wallMs: stats(runs.map((r) => r.ms)),
    peakRssMb: stats(runs.map((r) => r.rssKb / 1024)),
    peakTreeRssMb: stats(runs.map((r) => r.treeKb / 1024)),
    ...(Object.keys(stepMs).length ? { stepMs } : {}),
    firstRequestBytes: runs.find((r) => r.firstRequestBytes)?.firstRequestBytes,
    failures: runs.filter((r) => r.problems.length).length,
    problems: [...new Set(runs.flatMap((r) => r.problems))].slice(0, 3),
  }
}

/** One case: fresh homes for both, a warm-up run each, then `n` pairs in alternating order. */
async function benchCase(name, mode, calls, n) {
  const tools = [dshTool(`${name}-dsh`), codexTool(`${name}-codex`)]
  tools[1].shellTool = shellTool
  const runs = { dsh: [], codex: [] }
  for (const t of tools) {
    const warm = await once(t, mode, 3) // creates the home's state, warms the disk cache
    if (warm.problems.length) console.error(`${name}: ${t.name} warm-up: ${warm.problems.join('; ')}`)
  }
  for (let i = 0; i < n; i++) {
    for (const t of i % 2 ? [...tools].reverse() : tools) runs[t.name].push(await once(t, mode, calls))
  }
  const dsh = summarise(runs.dsh)
  const codex = summarise(runs.codex)
  const ratio = (pick) => {
    const a = pick(dsh)?.median
    const b = pick(codex)?.median
    return a !== undefined && b ? Math.round((a / b) * 100) / 100 : undefined
  }
  const ratios = {
    firstRequest: ratio((s) => s.firstRequestMs), wall: ratio((s) => s.wallMs),
    peakRss: ratio((s) => s.peakRssMb), peakTreeRss: ratio((s) => s.peakTreeRssMb),
    ...Object.fromEntries(Object.keys(STEP_WINDOWS).map((at) => [`stepAt${at}`, ratio((s) => s.stepMs?.[at])]).filter(([, v]) => v !== undefined)),
  }
  return { name, mode, calls, dsh, codex, ratios }
}

const range = (s) => (s ? `${s.median} (${s.min}–${s.max})` : '')
const steps = (s) => (s.stepMs ? Object.entries(s.stepMs).map(([at, v]) => `@${at}: ${range(v)}`).join(', ') : '')
const HEADER = ['case', 'tool', 'start→1st request ms', 'wall ms', 'peak RSS MB', 'peak tree RSS MB', 'ms/step', 'failures']
function caseRows(r) {
  const rows = ['dsh', 'codex'].map((t) => {
    const s = r[t]
    return [r.name, t, range(s.firstRequestMs), range(s.wallMs), range(s.peakRssMb), range(s.peakTreeRssMb), steps(s), `${s.failures}/${s.runs}`]
  })
  const x = r.ratios
  rows.push([r.name, 'dsh/codex', `${x.firstRequest ?? ''}`, `${x.wall ?? ''}`, `${x.peakRss ?? ''}`, `${x.peakTreeRss ?? ''}`,
    Object.keys(STEP_WINDOWS).filter((at) => x[`stepAt${at}`] !== undefined).map((at) => `@${at}: ${x[`stepAt${at}`]}`).join(', '), ''])
  return rows
}
function printTable(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)))
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd())
}

let shellTool
let offered
const results = []
const netns = Boolean(process.env[NETNS_MARK])
const out = join(root, 'bench-results')
/** Writes everything measured so far (after every case, so an interrupted run keeps its cases). */
function save() {
  mkdirSync(out, { recursive: true })
  writeFileSync(join(out, 'codex.json'), `${JSON.stringify({
    date: new Date().toISOString(), node: process.version, codex: codexVersion, codexShellTool: shellTool, codexTools: offered,
    runs: RUNS, longRuns: LONG_RUNS, runs1000: RUNS_1000, rss: TIME ? '/usr/bin/time %M' : '/proc VmRSS',
    loadavg: { before: loadBefore, now: loadavg() }, netns, results,
  }, null, 2)}\n`)
}
async function run(name, mode, calls, n) {
  if (n === 0) return
  const r = await benchCase(name, mode, calls, n)
  results.push(r)
  save()
  printTable([HEADER, ...caseRows(r)])
}
try {
  ({ shell: shellTool, offered } = await probeCodexShell(codexTool('probe')))
  for (const mode of MODES) await run(`one-shot, 3 tool calls, ${mode}`, mode, 3, RUNS)
  for (const mode of MODES) {
    await run(`200 steps, ${mode}`, mode, 199, LONG_RUNS)
    await run(`1000 steps, ${mode}`, mode, 999, RUNS_1000)
  }
} catch (error) {
  console.error(`bench-codex: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
} finally {
  await model.close()
  rmSync(scratch, { recursive: true, force: true, maxRetries: 5 })
}
if (process.exitCode) process.exit()

console.log('')
printTable([HEADER, ...results.flatMap(caseRows)])
for (const r of results) for (const t of ['dsh', 'codex']) for (const p of r[t].problems) console.log(`${r.name}, ${t}: ${p}`)
const fmt = (l) => l.map((x) => x.toFixed(2)).join(' ')
console.log(`\n${codexVersion}; codex shell tool: ${shellTool}; medians (min–max) of ${RUNS} interleaved pairs (200 steps: ${LONG_RUNS}, 1000 steps: ${RUNS_1000}); ` +
  `load average before ${fmt(loadBefore)}, after ${fmt(loadavg())}; network: ${netns ? 'loopback-only namespace' : 'host (outside calls off in config)'}`)
console.log(`wrote ${join('bench-results', 'codex.json')}`)
process.exit(results.some((r) => r.dsh.failures || r.codex.failures) ? 1 : 0)
