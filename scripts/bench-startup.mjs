// Start-up A/B of two built dsh checkouts in one interleaved run (decision 0085):
//   node scripts/bench-startup.mjs --base <other checkout> [--runs N]
// (e.g. a copy of this checkout made before a change, built). Figures, each in a fresh process
// against the testkit's scripted mock model with a warm temp DSH_HOME: start → first model
// request of a 3-tool headless one-shot (plain, and with one out-of-tree row in the profile),
// the one-shot's wall time, and the wall time of `--help` / `--version`. Without --base it
// measures this checkout alone. Prints medians and min–max and the this/base ratio of medians.
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const arg = (name) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : undefined }
const RUNS = Number(arg('--runs') ?? 12)
const base = arg('--base')
const VARIANTS = {
  ...(base ? { base: join(resolve(base), 'packages/cli/bin/dsh.js') } : {}),
  this: join(root, 'packages/cli/bin/dsh.js'),
}

const { startMockModel } = await import(join(root, 'packages/testkit/dist/index.js'))
const model = await startMockModel()
const script = [
  ...[1, 2, 3].map((i) => ({ toolCalls: [{ name: 'bash', arguments: { command: 'true', description: `step ${i}` } }] })),
  { text: 'done' },
]
const scratch = mkdtempSync(join(tmpdir(), 'dsh-bench-startup-'))

/** One DSH_HOME per variant (each build keeps its own caches), with profile `oot`: headless + one trivial out-of-tree row. */
function makeHome(name) {
  const home = join(scratch, name)
  const oot = join(home, 'profiles', 'oot')
  mkdirSync(join(oot, 'node_modules', 'dsh-bench-noop'), { recursive: true })
  writeFileSync(join(oot, 'package.json'), JSON.stringify({ name: 'oot', private: true, dsh: { profile: { version: 1, bundles: ['@dsh/bundle-base', '@dsh/bundle-headless'] } } }))
  writeFileSync(join(oot, 'cordis.patch.yml'), '- insert:\n    - id: noop\n      name: dsh-bench-noop/plugin\n')
  writeFileSync(join(oot, 'node_modules', 'dsh-bench-noop', 'package.json'), JSON.stringify({ name: 'dsh-bench-noop', type: 'module', exports: { './plugin': './plugin.js' } }))
  writeFileSync(join(oot, 'node_modules', 'dsh-bench-noop', 'plugin.js'), 'export function apply() {}\n')
  return { PATH: process.env.PATH, HOME: scratch, DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'bench' }
}
const envs = Object.fromEntries(Object.keys(VARIANTS).map((v) => [v, makeHome(v)]))

function run(variant, args) {
  return new Promise((resolvePromise, reject) => {
    const startedAt = Date.now()
    const started = process.hrtime.bigint()
    const child = spawn(process.execPath, [VARIANTS[variant], ...args], { env: envs[variant], stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d) => { stderr += d })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${variant}: dsh ${args.join(' ')} exited ${code}: ${stderr}`))
      else resolvePromise({ startedAt, ms: Number(process.hrtime.bigint() - started) / 1e6 })
    })
  })
}

async function firstRequest(variant, profile) {
  model.setScript(script)
  model.requests.length = 0
  const r = await run(variant, ['--profile', profile, 'run the steps'])
  return model.requests[0].time - r.startedAt
}

const CASES = {
  'start → first request': (v) => firstRequest(v, 'headless'),
  'start → first request, + out-of-tree row': (v) => firstRequest(v, 'oot'),
  'one-shot wall (3 tools)': async (v) => { model.setScript(script); return (await run(v, ['--profile', 'headless', 'run the steps'])).ms },
  'dsh --help': async (v) => (await run(v, ['--help'])).ms,
  'dsh --version': async (v) => (await run(v, ['--version'])).ms,
}

const samples = {}
try {
  for (const v of Object.keys(VARIANTS)) for (const c of Object.values(CASES)) await c(v) // warm-up: caches, templates, disk
  for (let i = 0; i < RUNS; i++) {
    for (const [name, c] of Object.entries(CASES)) {
      const order = i % 2 ? Object.keys(VARIANTS).reverse() : Object.keys(VARIANTS)
      for (const v of order) ((samples[name] ??= {})[v] ??= []).push(await c(v))
    }
  }
} finally {
  await model.close()
  rmSync(scratch, { recursive: true, force: true })
}

const median = (v) => { const s = [...v].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2 }
const fmt = (v) => `${median(v).toFixed(0)} (${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)})`
const names = Object.keys(VARIANTS)
console.log(`${RUNS} interleaved runs; ms, median (min–max)`)
console.log(`| figure | ${names.join(' | ')} |${base ? ' ratio |' : ''}\n|---|${names.map(() => '---|').join('')}${base ? '---|' : ''}`)
for (const [name, by] of Object.entries(samples)) {
  const ratio = base ? ` ${(median(by.this) / median(by.base)).toFixed(2)} |` : ''
  console.log(`| ${name} | ${names.map((v) => fmt(by[v])).join(' | ')} |${ratio}`)
}
