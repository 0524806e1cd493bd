// The launch loop bench-startup.mjs and bench-bundle.mjs share: start-up figures of several
// dsh bin scripts in one interleaved run (the order alternates every round), each launch a
// fresh process against the testkit's scripted mock model, each variant with its own warm temp
// DSH_HOME (its own parse and code caches). Cases: start → first model request of a 3-tool
// headless one-shot (plain, and with one out-of-tree row in the profile), the CPU the dsh
// process used until the mock received that request (read from /proc: less at the mercy of
// other load than wall time), the one-shot's wall
// time sandboxed (the default preset) and unsandboxed, in an empty workspace, and the wall time of `--help` /
// `--version`. Prints medians and min–max, the load average, and the ratio of the last
// variant's median to the first's.
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const TASK = 'run the steps'
const SCRIPT = [
  ...[1, 2, 3].map((i) => ({ toolCalls: [{ name: 'bash', arguments: { command: 'true', description: `step ${i}` } }] })),
  { text: 'done' },
]

/** A DSH_HOME with profile `oot`: headless + one trivial out-of-tree row (the bundle's shared-module hook, 0061). */
function makeHome(home) {
  const oot = join(home, 'profiles', 'oot')
  mkdirSync(join(oot, 'node_modules', 'dsh-bench-noop'), { recursive: true })
  writeFileSync(join(oot, 'package.json'), JSON.stringify({ name: 'oot', private: true, dsh: { profile: { version: 1, bundles: ['@dsh/bundle-base', '@dsh/bundle-headless'] } } }))
  writeFileSync(join(oot, 'cordis.patch.yml'), '- insert:\n    - id: noop\n      name: dsh-bench-noop/plugin\n')
  writeFileSync(join(oot, 'node_modules', 'dsh-bench-noop', 'package.json'), JSON.stringify({ name: 'dsh-bench-noop', type: 'module', exports: { './plugin': './plugin.js' } }))
  writeFileSync(join(oot, 'node_modules', 'dsh-bench-noop', 'plugin.js'), 'export function apply() {}\n')
}

/** On-CPU milliseconds of every thread of process `pid` so far (/proc/<pid>/task/<tid>/schedstat). */
function cpuMs(pid) {
  let ns = 0
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0])
    } catch {
      // the thread exited
    }
  }
  return ns / 1e6
}

const median = (v) => { const s = [...v].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2 }
const fmt = (v) => `${median(v).toFixed(0)} (${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)})`

/**
 * Runs the cases `runs` times for every variant (name → path of a bin script), interleaved,
 * after one warm-up launch of each case per variant, and prints the table.
 */
export async function startupAB({ variants, runs, scratchPrefix = 'dsh-bench-startup-' }) {
  const { startMockModel } = await import(join(root, 'packages/testkit/dist/index.js'))
  // the launch in flight: its CPU is read when the mock logs its first request
  let current
  const model = await startMockModel({ log: () => { if (current && current.cpuMs === undefined) current.cpuMs = cpuMs(current.pid) } })
  const scratch = mkdtempSync(join(tmpdir(), scratchPrefix))
  const workspace = join(scratch, 'work') // an empty workspace, as bench-codex's
  mkdirSync(workspace)
  const envs = {}
  for (const name of Object.keys(variants)) {
    const home = join(scratch, `home-${Object.keys(envs).length}`)
    makeHome(home)
    envs[name] = { PATH: process.env.PATH, HOME: scratch, DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'bench' }
  }

  const launch = (variant, args) => new Promise((resolve, reject) => {
    const startedAt = Date.now()
    const started = process.hrtime.bigint()
    const child = spawn(process.execPath, [variants[variant], ...args], { env: envs[variant], cwd: workspace, stdio: ['ignore', 'ignore', 'pipe'] })
    const launched = current = { pid: child.pid, cpuMs: undefined }
    let stderr = ''
    child.stderr.on('data', (d) => { stderr += d })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${variant}: dsh ${args.join(' ')} exited ${code}: ${stderr}`))
      else resolve({ startedAt, ms: Number(process.hrtime.bigint() - started) / 1e6, cpuMs: launched.cpuMs })
    })
  })
  const oneShot = (variant, args) => {
    model.setScript(SCRIPT)
    model.requests.length = 0
    return launch(variant, [...args, TASK])
  }
  const firstRequest = async (variant, profile) => {
    const r = await oneShot(variant, ['--profile', profile])
    return model.requests[0].time - r.startedAt
  }
  const cases = {
    'start → first request': (v) => firstRequest(v, 'headless'),
    'CPU to the first request (steadier on a busy machine)': async (v) => (await oneShot(v, ['--profile', 'headless'])).cpuMs,
    'start → first request, + out-of-tree row': (v) => firstRequest(v, 'oot'),
    'one-shot wall (3 tools, sandboxed)': async (v) => (await oneShot(v, ['--profile', 'headless'])).ms,
    'one-shot wall (3 tools, unsandboxed)': async (v) => (await oneShot(v, ['--profile', 'headless', '--permission-mode', 'danger-full-access'])).ms,
    'dsh --help': async (v) => (await launch(v, ['--help'])).ms,
    'dsh --version': async (v) => (await launch(v, ['--version'])).ms,
  }

  const names = Object.keys(variants)
  const samples = {}
  const loadBefore = loadavg()[0]
  try {
    for (const v of names) for (const c of Object.values(cases)) await c(v) // warm-up: caches, templates, disk
    for (let i = 0; i < runs; i++) {
      const order = i % 2 ? [...names].reverse() : names
      for (const [name, c] of Object.entries(cases)) {
        for (const v of order) ((samples[name] ??= {})[v] ??= []).push(await c(v))
      }
    }
  } finally {
    await model.close()
    rmSync(scratch, { recursive: true, force: true })
  }

  const ratio = names.length > 1
  const [first, last] = [names[0], names.at(-1)]
  console.log(`${runs} interleaved runs; ms, median (min–max); load average ${loadBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)}`)
  console.log(`| figure | ${names.join(' | ')} |${ratio ? ` ${last}/${first} |` : ''}\n|---|${names.map(() => '---|').join('')}${ratio ? '---|' : ''}`)
  for (const [name, by] of Object.entries(samples)) {
    console.log(`| ${name} | ${names.map((v) => fmt(by[v])).join(' | ')} |${ratio ? ` ${(median(by[last]) / median(by[first])).toFixed(2)} |` : ''}`)
  }
  return samples
}
