// Per-call cost of a sandboxed command through the real exec seams (in process, built
// dist): `ctx.shell.run('true')` under danger-full-access, workspace-write and read-only,
// interleaved round by round, then the same with a large heap (does a command's cost grow
// with the dsh process's size?). Where the build has the spawner (0080), each case runs through
// it and through Node's own spawn (its fallback), interleaved in the same rounds; where it has
// the shared sandbox (0092), also through the spawner with a bubblewrap per call.
// Prints medians and min–max in ms. A benchmark: nothing asserted.
//   node scripts/bench-sandbox.mjs [--rounds N] [--calls N] [--exec DIST] [--big MB]
// --exec: another build of packages/exec (its dist folder) to measure, e.g. a snapshot of main's.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { numberFlag } from './bench-args.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const arg = numberFlag
const ROUNDS = arg('--rounds', 7)
const CALLS = arg('--calls', 30)

const { Context } = await import('@deepseek-ai/cordis')
const execArg = process.argv.indexOf('--exec')
const dist = execArg > 0 ? resolve(process.argv[execArg + 1]) : join(root, 'packages/exec/dist')
const plugin = (name) => import(join(dist, `plugins/${name}.js`))
const [subprocess, sandbox, fs, shell] = await Promise.all(['subprocess', 'sandbox', 'fs', 'shell'].map(plugin))

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-bench-sandbox-')))
const ws = join(scratch, 'ws')
const tmp = join(scratch, 'tmp')
await import('node:fs').then((m) => { m.mkdirSync(ws); m.mkdirSync(tmp) })
process.env.DSH_HOME = join(scratch, 'home')

async function tree(subprocessConfig) {
  const ctx = new Context()
  await ctx.plugin(subprocess, subprocess.Config.parse(subprocessConfig))
  await ctx.plugin(sandbox, sandbox.Config.parse({}))
  await ctx.plugin(fs, {})
  await ctx.plugin(shell, shell.Config.parse({}))
  return ctx
}
const hasSpawner = 'perlPath' in subprocess.Config.parse({})
const hasShare = 'shareSandbox' in subprocess.Config.parse({})
const modes = ['danger-full-access', 'workspace-write', 'read-only']
// one tree per launcher and mode: a shared sandbox serves one confinement, and alternating
// modes in one tree would measure its restarts (a session keeps its mode)
const trees = async (config) => Object.fromEntries(await Promise.all(modes.map(async (m) => [m, await tree(config)])))
const launchers = hasSpawner
  ? { spawner: await trees({}), ...(hasShare ? { 'spawner, bwrap per call': await trees({ shareSandbox: false }) } : {}), 'node spawn': await trees({ perlPath: '' }) }
  : { '': await trees({}) }
let ctx
process.setMaxListeners(40) // each tree adds an exit listener
await new Promise((r) => setTimeout(r, 50))

const policy = (mode) => ({ mode, cwd: ws, writableRoots: [ws], tmpRoot: tmp, network: false })

/** Wall ms per call, and this process's CPU ms per call (fork, spawn, /proc scans: less noisy on a loaded machine). */
async function perCall(mode, cpu) {
  ctx = launcher[mode]
  const p = policy(mode)
  const t0 = process.hrtime.bigint()
  const u0 = process.cpuUsage()
  for (let i = 0; i < CALLS; i++) {
    const r = await ctx.shell.run('true', { policy: p })
    if (r.exitCode !== 0) throw new Error(`${mode}: exit ${r.exitCode} ${r.output}`)
  }
  const u = process.cpuUsage(u0)
  cpu?.push((u.user + u.system) / 1000 / CALLS)
  return Number(process.hrtime.bigint() - t0) / 1e6 / CALLS
}

async function perWrap(mode) {
  ctx = launcher[mode]
  const p = policy(mode)
  const n = 200
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) await ctx.sandbox.wrap(['bash', '-c', 'true'], p)
  return Number(process.hrtime.bigint() - t0) / 1e6 / n
}

const median = (v) => { const s = [...v].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2 }
const fmt = (v) => `${median(v).toFixed(2)} (${Math.min(...v).toFixed(2)}–${Math.max(...v).toFixed(2)})`

let launcher
for (launcher of Object.values(launchers)) for (const m of modes) await perCall(m) // warm: probe, hard-link scan, page cache, the shared sandbox
const results = {}
const cpus = {}
let ballast
for (const heap of ['small heap', 'heap +400 MB']) {
  if (heap !== 'small heap') {
    // touched memory makes the parent's page tables large: what a fork/vfork must copy or not
    ballast = Array.from({ length: 400 }, () => Buffer.alloc(1 << 20, 1))
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const [label, c] of Object.entries(launchers)) {
      launcher = c
      const key = (m) => `${m}, ${heap}${label ? `, ${label}` : ''}`
      for (const m of modes) ((results[key(m)] ??= [])).push(await perCall(m, (cpus[key(m)] ??= [])))
    }
  }
}
const wraps = {}
for (let r = 0; r < ROUNDS; r++) for (const m of modes.slice(1)) ((wraps[m] ??= [])).push(await perWrap(m))
void ballast

const rows = [['case', `wall ms per call, median (min–max) of ${ROUNDS} rounds × ${CALLS} calls`, 'dsh CPU ms per call']]
for (const [name, v] of Object.entries(results)) rows.push([`shell.run true, ${name}`, fmt(v), fmt(cpus[name])])
for (const [name, v] of Object.entries(wraps)) rows.push([`sandbox.wrap only, ${name}`, fmt(v), ''])
const w = [0, 1].map((i) => Math.max(...rows.map((r) => r[i].length)))
for (const r of rows) console.log(`${r[0].padEnd(w[0])}  ${r[1].padEnd(w[1])}  ${r[2]}`)
const ratio = (a, b) => (median(results[a]) / median(results[b])).toFixed(2)
for (const label of Object.keys(launchers)) {
  const k = (m, heap) => `${m}, ${heap}${label ? `, ${label}` : ''}`
  console.log(`\n${label || 'this build'}: sandboxed/unsandboxed (workspace-write): ${ratio(k('workspace-write', 'small heap'), k('danger-full-access', 'small heap'))}×; large/small heap (workspace-write): ${ratio(k('workspace-write', 'heap +400 MB'), k('workspace-write', 'small heap'))}×`)
}
if (hasShare) {
  for (const heap of ['small heap', 'heap +400 MB']) {
    for (const m of modes.slice(1)) console.log(`shared sandbox/bwrap per call, ${m}, ${heap}: wall ${ratio(`${m}, ${heap}, spawner`, `${m}, ${heap}, spawner, bwrap per call`)}×, CPU ${(median(cpus[`${m}, ${heap}, spawner`]) / median(cpus[`${m}, ${heap}, spawner, bwrap per call`])).toFixed(2)}×`)
  }
}
if (hasSpawner) {
  for (const heap of ['small heap', 'heap +400 MB']) {
    for (const m of modes) console.log(`spawner/node spawn, ${m}, ${heap}: wall ${ratio(`${m}, ${heap}, spawner`, `${m}, ${heap}, node spawn`)}×, CPU ${(median(cpus[`${m}, ${heap}, spawner`]) / median(cpus[`${m}, ${heap}, node spawn`])).toFixed(2)}×`)
  }
}
rmSync(scratch, { recursive: true, force: true })
process.exit(0)
