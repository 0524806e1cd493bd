// A/B of the bundled entry points (decision 0060) against the per-file transpiled build, in
// one interleaved run: `node scripts/bench-bundle.mjs [--runs N]` after `npm run build`.
// Figures: start → first model request of a 3-tool headless one-shot, its wall time, and the
// wall time of `dsh --help` / `--version`, each in a fresh process with a temp DSH_HOME.
// Prints medians and min–max per variant and the after/before ratio of the medians.
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const VARIANTS = {
  'per-file dist': join(root, 'packages/cli/dist/bin/dsh.js'),
  bundle: join(root, 'packages/cli/bin/dsh.js'),
}
const runsArg = process.argv.indexOf('--runs')
const RUNS = Number(runsArg > 0 ? process.argv[runsArg + 1] : 15)

const { startMockModel } = await import(join(root, 'packages/testkit/dist/index.js'))
const model = await startMockModel()
const script = [
  ...[1, 2, 3].map((i) => ({ toolCalls: [{ name: 'bash', arguments: { command: 'true', description: `step ${i}` } }] })),
  { text: 'done' },
]
const scratch = mkdtempSync(join(tmpdir(), 'dsh-bench-bundle-'))
const home = join(scratch, 'home')
mkdirSync(home)
// profile `oot`: the headless profile plus one out-of-tree row (a trivial plugin in its node_modules),
// which makes the bundled dsh install its shared-module resolve hook
const oot = join(home, 'profiles', 'oot')
mkdirSync(join(oot, 'node_modules', 'dsh-bench-noop'), { recursive: true })
writeFileSync(join(oot, 'package.json'), JSON.stringify({ name: 'oot', private: true, dsh: { profile: { version: 1, bundles: ['@dsh/bundle-base', '@dsh/bundle-headless'] } } }))
writeFileSync(join(oot, 'cordis.patch.yml'), '- insert:\n    - id: noop\n      name: dsh-bench-noop/plugin\n')
writeFileSync(join(oot, 'node_modules', 'dsh-bench-noop', 'package.json'), JSON.stringify({ name: 'dsh-bench-noop', type: 'module', exports: { './plugin': './plugin.js' } }))
writeFileSync(join(oot, 'node_modules', 'dsh-bench-noop', 'plugin.js'), 'export function apply() {}\n')
const env = { PATH: process.env.PATH, HOME: scratch, DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'bench' }

function run(bin, args) {
  return new Promise((resolve, reject) => {
    const startedAt = Date.now()
    const started = process.hrtime.bigint()
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d) => { stderr += d })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${bin} ${args.join(' ')} exited ${code}: ${stderr}`))
      else resolve({ startedAt, ms: Number(process.hrtime.bigint() - started) / 1e6 })
    })
  })
}

const CASES = {
  'start → first request': async (bin) => {
    model.setScript(script)
    model.requests.length = 0
    const r = await run(bin, ['--profile', 'headless', 'run the steps'])
    return model.requests[0].time - r.startedAt
  },
  'start → first request, + out-of-tree row': async (bin) => {
    model.setScript(script)
    model.requests.length = 0
    const r = await run(bin, ['--profile', 'oot', 'run the steps'])
    return model.requests[0].time - r.startedAt
  },
  'one-shot wall (3 tools)': async (bin) => {
    model.setScript(script)
    return (await run(bin, ['--profile', 'headless', 'run the steps'])).ms
  },
  'dsh --help': async (bin) => (await run(bin, ['--help'])).ms,
  'dsh --version': async (bin) => (await run(bin, ['--version'])).ms,
}

const samples = {}
try {
  for (const bin of Object.values(VARIANTS)) for (const c of Object.values(CASES)) await c(bin) // warm-up
  for (let i = 0; i < RUNS; i++) {
    for (const [name, c] of Object.entries(CASES)) {
      const order = i % 2 ? Object.entries(VARIANTS).reverse() : Object.entries(VARIANTS)
      for (const [variant, bin] of order) ((samples[name] ??= {})[variant] ??= []).push(await c(bin))
    }
  }
} finally {
  await model.close()
  rmSync(scratch, { recursive: true, force: true })
}

const median = (v) => { const s = [...v].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2 }
const fmt = (v) => `${median(v).toFixed(0)} (${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)})`
const [a, b] = Object.keys(VARIANTS)
console.log(`${RUNS} interleaved runs; ms median (min–max)`)
console.log(`| figure | ${a} | ${b} | ratio |\n|---|---|---|---|`)
for (const [name, byVariant] of Object.entries(samples)) {
  console.log(`| ${name} | ${fmt(byVariant[a])} | ${fmt(byVariant[b])} | ${(median(byVariant[b]) / median(byVariant[a])).toFixed(2)} |`)
}
