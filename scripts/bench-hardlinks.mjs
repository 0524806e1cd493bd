#!/usr/bin/env node
// The cost of hard links out of a writable root. 1 (issue 12 item 6a): one scan of a
// workspace of N files (done once per root per process). 2 (0099): what the outside links
// add to every sandboxed command — one bwrap bind per link (0021 as it was) against the
// plan of link-plan.ts — in a pnpm-like node_modules (10 links per package directory, a
// lock file beside them) with bwrap started directly, 3 calls each. Run after `npm run build`:
//   node scripts/bench-hardlinks.mjs [--links 100,500,1000,2000] [files...]   (default 10000 50000 200000)
import { spawnSync } from 'node:child_process'
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Bubblewrap } from '../packages/exec/dist/sandbox/bubblewrap.js'
import { outsideLinks, scanLinkedFiles } from '../packages/exec/dist/sandbox/hardlinks.js'
import { planLinkMounts } from '../packages/exec/dist/sandbox/link-plan.js'
import { LocalSubprocess } from '../packages/exec/dist/subprocess/local.js'
import { Context } from '@deepseek-ai/cordis'

const subprocess = new LocalSubprocess(new Context(), { killGraceMs: 500, shPath: '/bin/sh' })

const argv = process.argv.slice(2)
const linksAt = argv.indexOf('--links')
const linkCounts = linksAt >= 0 ? argv.splice(linksAt, 2)[1].split(',').map(Number) : [100, 500, 1000, 2000]
const sizes = argv.map(Number).filter((n) => n > 0)
const RUNS = 5

function workspace(files) {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-bench-links-'))
  const outside = join(dir, 'outside.txt')
  writeFileSync(outside, 'x')
  const ws = join(dir, 'ws')
  // 100 files per directory, 3 levels deep, like a source tree
  for (let i = 0; i < files; i++) {
    const sub = join(ws, `d${Math.floor(i / 10000)}`, `e${Math.floor(i / 100) % 100}`)
    if (i % 100 === 0) mkdirSync(sub, { recursive: true })
    writeFileSync(join(sub, `f${i}.ts`), '')
  }
  for (let i = 0; i < 10; i++) linkSync(outside, join(ws, `d0`, `link${i}.txt`))
  return { dir, ws }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const fmt = (ms) => `${ms.toFixed(1)} ms`
const rows = []
for (const files of sizes.length ? sizes : [10_000, 50_000, 200_000]) {
  const { dir, ws } = workspace(files)
  for (const [engine, seam] of [['find', subprocess], ['node walk', undefined]]) {
    const times = []
    let found = 0
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now()
      found = outsideLinks([await scanLinkedFiles(ws, seam)]).length
      times.push(performance.now() - t0)
    }
    rows.push({ files, engine, found, median: fmt(median(times)), min: fmt(Math.min(...times)), max: fmt(Math.max(...times)), perFile: `${((median(times) * 1000) / files).toFixed(2)} µs` })
  }
  rmSync(dir, { recursive: true, force: true })
}
console.log(`hard-link scan of a workspace (once per writable root per dsh process; ${RUNS} runs each)`)
console.table(rows)

/** A pnpm-like workspace with `links` files hard-linked to a store outside it. */
function pnpmWorkspace(links) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-bench-pnpm-')))
  const ws = join(dir, 'ws')
  const virtual = join(ws, 'node_modules', '.pnpm')
  for (let i = 0; i < links; i++) {
    const pkg = join(virtual, `p${Math.floor(i / 10)}@1.0.0`, 'node_modules', `p${Math.floor(i / 10)}`)
    const store = join(dir, 'store', `p${Math.floor(i / 10)}`)
    if (i % 10 === 0) { mkdirSync(pkg, { recursive: true }); mkdirSync(store, { recursive: true }) }
    writeFileSync(join(store, `${i}`), '')
    linkSync(join(store, `${i}`), join(pkg, `f${i}.js`))
  }
  mkdirSync(virtual, { recursive: true })
  writeFileSync(join(virtual, 'lock.yaml'), '')
  symlinkSync('.pnpm/p0@1.0.0/node_modules/p0', join(ws, 'node_modules', 'p0'))
  const tmp = join(dir, 'tmp')
  mkdirSync(tmp)
  return { dir, ws, tmp }
}

function timeCall(cmd) {
  const t0 = performance.now()
  const r = spawnSync(cmd[0], cmd.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] })
  if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr}`)
  return performance.now() - t0
}

const bwrap = new Bubblewrap('bwrap')
const CALLS = 3
const perCall = []
for (const links of [0, ...linkCounts]) {
  const { dir, ws, tmp } = pnpmWorkspace(links)
  const policy = { mode: 'workspace-write', cwd: ws, writableRoots: [ws, tmp], tmpRoot: tmp, network: false }
  const outside = outsideLinks([await scanLinkedFiles(ws, subprocess)])
  const t0 = performance.now()
  const plan = await planLinkMounts(outside, [ws, tmp])
  const planMs = performance.now() - t0
  // bwrap itself: drop the `sh -c 'exec "$@" 3<FILE'` seccomp prefix
  const direct = (confine) => { const a = bwrap.wrap(['true'], policy, ws, confine); return a.slice(a.indexOf('bwrap')).filter((x, i, all) => !(x === '--seccomp' || all[i - 1] === '--seccomp')) }
  const variants = { 'one bind per link (before)': { readOnly: outside.map((f) => f.path) }, 'link plan (now)': { readOnly: plan.readOnly, writable: plan.writable } }
  const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]))
  for (let c = 0; c < CALLS; c++) for (const [k, confine] of Object.entries(variants)) times[k].push(timeCall(direct(confine)))
  for (const [k, confine] of Object.entries(variants)) {
    const t = times[k]
    perCall.push({ links, way: k, mounts: (confine.readOnly?.length ?? 0) + (confine.writable?.length ?? 0), 'ms per command, median': median(t).toFixed(1), 'min–max': `${Math.min(...t).toFixed(1)}–${Math.max(...t).toFixed(1)}`, 'plan (once)': k.startsWith('link') ? fmt(planMs) : '' })
  }
  rmSync(dir, { recursive: true, force: true })
}
console.log(`\nwhat outside hard links add to each sandboxed command (bwrap wall, ${CALLS} calls each, interleaved)`)
console.table(perCall)
console.log(`load average at the end: ${(await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)
