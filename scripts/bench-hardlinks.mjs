#!/usr/bin/env node
// The cost of finding hard links out of a writable root (issue 12 item 6a): one scan of a
// workspace of N files (done once per root per process), and a confined wrap after it
// (cached: only the found links are re-checked). Run after `npm run build`:
//   node scripts/bench-hardlinks.mjs [files...]   (default 10000 50000 200000)
import { linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { outsideLinks, scanLinkedFiles } from '../packages/exec/dist/sandbox/hardlinks.js'
import { LocalSubprocess } from '../packages/exec/dist/subprocess/local.js'
import { Context } from '@deepseek-ai/cordis'

const subprocess = new LocalSubprocess(new Context(), { killGraceMs: 500, shPath: '/bin/sh' })

const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
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
