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

export const CASES = [
  { name: 'dsh --help', args: ['--help'], target: '≤ 100 ms' },
  { name: 'dsh --version', args: ['--version'], target: '≤ 100 ms' },
  { name: 'dsh --profile headless --dump-config', args: ['--profile', 'headless', '--dump-config'] },
]

const runsArg = process.argv.indexOf('--runs')
const RUNS = Number(runsArg > 0 ? process.argv[runsArg + 1] : process.env.BENCH_RUNS ?? 10)
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined

/** One run: wall ms and peak RSS in KB (via /usr/bin/time -f %M, else /proc VmHWM polling). */
function once(args, env, scratch) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const rssFile = join(scratch, 'rss')
    const child = TIME
      ? spawn(TIME, ['-f', '%M', '-o', rssFile, process.execPath, dshBin, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] })
      : spawn(process.execPath, [dshBin, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] })
    let peak = 0
    let stderr = ''
    child.stderr.on('data', (d) => { stderr += d })
    const poll = TIME ? undefined : setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))
        if (m) peak = Math.max(peak, Number(m[1]))
      } catch { /* gone */ }
    }, 2)
    child.on('error', reject)
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6
      clearInterval(poll)
      if (TIME) peak = Number(readFileSync(rssFile, 'utf8').trim().split('\n').at(-1))
      resolve({ ms, rssKb: peak, code, stderr })
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
  const env = { PATH: process.env.PATH, HOME: scratch, DSH_HOME: home, ...c.env }
  try {
    await c.setup?.({ home, env, root })
    const warm = await once(c.args, env, scratch) // creates templates, warms the disk cache
    if (warm.code !== 0) throw new Error(`${c.name} exited ${warm.code}: ${warm.stderr}`)
    const runs = []
    for (let i = 0; i < RUNS; i++) runs.push(await once(c.args, env, scratch))
    return {
      name: c.name, runs: RUNS, target: c.target ?? null,
      wallMs: { median: round(median(runs.map((r) => r.ms))), min: round(Math.min(...runs.map((r) => r.ms))), max: round(Math.max(...runs.map((r) => r.ms))) },
      peakRssMb: { median: round(median(runs.map((r) => r.rssKb)) / 1024), max: round(Math.max(...runs.map((r) => r.rssKb)) / 1024) },
      failures: runs.filter((r) => r.code !== 0).length,
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

function round(n) {
  return Math.round(n * 10) / 10
}

const results = []
for (const c of CASES) results.push(await bench(c))

const rows = [['case', 'wall median', 'min', 'max', 'peak RSS median', 'target', 'failures'],
  ...results.map((r) => [r.name, `${r.wallMs.median} ms`, `${r.wallMs.min}`, `${r.wallMs.max}`, `${r.peakRssMb.median} MB`, r.target ?? '', String(r.failures)])]
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
for (const r of rows) console.log(r.map((cell, i) => cell.padEnd(widths[i])).join('  '))

const out = join(root, 'bench-results')
mkdirSync(out, { recursive: true })
writeFileSync(join(out, 'latest.json'), `${JSON.stringify({ date: new Date().toISOString(), node: process.version, runs: RUNS, rss: TIME ? '/usr/bin/time %M' : '/proc VmHWM', results }, null, 2)}\n`)
console.log(`\nwrote ${join('bench-results', 'latest.json')}`)
