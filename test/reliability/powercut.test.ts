import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { SessionEvent } from '@dsh/protocol'
import { startMockModel, type MockModel } from '@dsh/testkit'
import { afterAll, beforeAll, expect } from 'vitest'
import { runDsh } from '../e2e/helpers/dsh.js'
import { defineLane, laneSeed, need, rng, scaled } from './lib.js'
import { imageDir, makeImage, mountImage, powerCut, prerequisites, script, startWriter } from './powercut-disk.js'
import { expectContiguous, onlySessionId, sessionFile, storedSession } from './sessions.js'

// power-cut lane: the sessions folder is an ext4 file system on a loop device. While a
// long `--json` writer runs, power cuts are taken at random moments (powercut-disk.ts: stop
// the writer, note what it had shown, copy the image, let it go on). After the writer ends
// each copy is mounted (journal replay) and the session recovered from it (`--resume`):
// every event the writer had shown before the cut (shown means durable) must be in the
// copy, and the copy must resume. Under eatmydata (fsync a no-op) shown events must go
// missing: the negative control that proves the lane sees a loss.
const lane = defineLane('powercut')
const random = rng(laneSeed('powercut'))

/** Writers of a run, each a new session of WRITER_STEPS steps cut CUTS times. */
const WRITERS = scaled(5)
const CUTS = 20
const WRITER_STEPS = 60
/** Steps of the calibration run (its length sets when the cuts fall). */
const CALIBRATION_STEPS = 20
/** Recoveries (mount + resume) running at once after a writer. */
const PARALLEL_RECOVERIES = 2

let model: MockModel
/** Answers every resume from a copy (many may run at once: the script is never reset). */
let recoverModel: MockModel
beforeAll(async () => {
  model = await startMockModel()
  recoverModel = await startMockModel({ script: Array.from({ length: 100_000 }, () => ({ text: 'recovered' })) })
})
afterAll(async () => { await Promise.all([model.close(), recoverModel.close()]) })

interface Cycle { shown: number; recovered: number; lost: string[]; resumed?: { code: number | null; stderr: string }; error?: string }

/** Mounts a copy, reads the session on it, compares with what was shown, resumes it. */
async function recover(copy: string, base: string, k: number, workspace: string, shown: SessionEvent[], control: boolean): Promise<Cycle> {
  const home = join(base, `recovered-${k}`)
  const unmount = mountImage(copy, join(home, 'sessions'))
  try {
    const id = onlySessionId(home)
    if (id === undefined) return { shown: shown.length, recovered: 0, lost: shown.map((e) => `${e.seq} ${e.type}`) }
    let recovered: SessionEvent[] = []
    try {
      recovered = storedSession(sessionFile(home, id)).events
      expectContiguous(recovered, 'recovered copy')
    } catch (error) {
      // under eatmydata anything goes; with fsync an unreadable copy is a failure
      if (!control) return { shown: shown.length, recovered: 0, lost: [], error: (error as Error).message }
    }
    const lost = shown.filter((e) => JSON.stringify(recovered[e.seq]) !== JSON.stringify(e)).map((e) => `${e.seq} ${e.type}`)
    const cycle: Cycle = { shown: shown.length, recovered: recovered.length, lost }
    if (!control && recovered.length) {
      const r = await runDsh(['--profile', 'headless', '--resume', id, 'go on'], {
        cwd: workspace, env: { DSH_HOME: home, DEEPSEEK_BASE_URL: recoverModel.url, DEEPSEEK_API_KEY: 'mock-key' }, timeoutMs: 120_000,
      })
      cycle.resumed = { code: r.code, stderr: r.stderr }
    }
    return cycle
  } finally {
    unmount()
    rmSync(copy, { force: true })
  }
}

/** Runs `jobs` with at most `n` at once. */
async function parallel<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length)
  let next = 0
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < jobs.length) {
      const i = next++
      out[i] = await jobs[i]!()
    }
  }))
  return out
}

/**
 * One writer on a fresh image, cut at `atMs` (sorted, from its start); returns each cut's
 * outcome. The writer itself must complete: the cuts (SIGSTOP/SIGCONT) must not disturb it.
 */
async function writerRun(atMs: number[], control: boolean): Promise<Cycle[]> {
  const base = imageDir()
  const image = join(base, 'disk.img')
  const home = join(base, 'home')
  const workspace = join(base, 'ws')
  mkdirSync(workspace)
  makeImage(image)
  const unmount = mountImage(image, join(home, 'sessions'))
  try {
    model.setScript(script(WRITER_STEPS))
    const writer = startWriter(model, home, workspace, join(base, 'stdout.jsonl'), control)
    const started = Date.now()
    const cuts: { copy: string; shown: SessionEvent[] }[] = []
    for (const [k, at] of atMs.entries()) {
      await new Promise((r) => setTimeout(r, Math.max(0, started + at - Date.now())))
      const copy = join(base, `copy-${k}.img`)
      cuts.push({ copy, shown: await powerCut(writer, image, copy) })
    }
    const end = await writer.done
    if (!control) expect(end.code, `the writer did not complete across its power cuts: ${end.stderr.slice(0, 400)}`).toBe(0)
    unmount()
    return await parallel(cuts.map((c, k) => () => recover(c.copy, base, k, workspace, c.shown, control)), PARALLEL_RECOVERIES)
  } finally {
    unmount()
    rmSync(base, { recursive: true, force: true })
  }
}

let runMs = 0
lane.case('calibration: the session completes on the loop file system', async () => {
  prerequisites()
  const base = imageDir()
  const image = join(base, 'disk.img')
  const home = join(base, 'home')
  makeImage(image)
  const unmount = mountImage(image, join(home, 'sessions'))
  try {
    model.setScript(script(CALIBRATION_STEPS))
    const started = Date.now()
    const result = await runDsh(['--profile', 'headless', '--json', 'go'], { cwd: base, env: { DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key' } })
    runMs = Date.now() - started
    expect(result.code, result.stderr.slice(0, 400)).toBe(0)
  } finally {
    unmount()
    rmSync(base, { recursive: true, force: true })
  }
}, 120_000)

/**
 * Cut moments of one writer, as fractions of a calibration run: the first within one
 * calibration run (boot and early steps), the rest anywhere in the writer's expected length.
 */
function plan(cuts: number): number[] {
  const span = WRITER_STEPS / CALIBRATION_STEPS
  return [random(), ...Array.from({ length: cuts - 1 }, () => random() * span)].sort((a, b) => a - b)
}

const results: Cycle[][] = []
for (let w = 0; w < WRITERS; w++) {
  const fractions = plan(CUTS)
  lane.case(`writer ${w + 1}/${WRITERS}: ${CUTS} power cuts while it runs, then it completes`, async () => {
    prerequisites()
    expect(runMs, 'calibration did not run').toBeGreaterThan(0)
    results[w] = await writerRun(fractions.map((f) => Math.floor(f * runMs)), false)
  }, 600_000)
  for (let k = 0; k < CUTS; k++) {
    lane.case(`power cut ${w * CUTS + k + 1}/${WRITERS * CUTS} (writer ${w + 1}, at ${(fractions[k]! * 100).toFixed(1)}% of a calibration run): zero shown (fsynced) events lost, the copy resumes`, () => {
      const c = results[w]?.[k]
      expect(c, `writer ${w + 1} did not run`).toBeDefined()
      expect(c!.error, 'the recovered copy is unreadable').toBeUndefined()
      expect(c!.lost, `shown on stdout but missing after the power cut (${c!.shown} shown, ${c!.recovered} recovered)`).toEqual([])
      if (c!.resumed) expect(c!.resumed.code, `resume from the copy failed: ${c!.resumed.stderr.slice(0, 400)}`).toBe(0)
    })
  }
}

const controlCuts = scaled(5)
const controlFractions = plan(controlCuts).map((f) => f / 2 + 0.5)
lane.case(`negative control: under eatmydata, ${controlCuts} power cuts lose shown events`, async () => {
  prerequisites()
  need('eatmydata')
  expect(runMs, 'calibration did not run').toBeGreaterThan(0)
  const cycles = await writerRun(controlFractions.map((f) => Math.floor(f * runMs)), true)
  const lost = cycles.reduce((n, c) => n + c.lost.length, 0)
  process.stdout.write(`reliability powercut: eatmydata control: ${lost} shown events lost over ${controlCuts} cuts (${cycles.map((c) => c.lost.length).join(', ')})\n`)
  expect(lost, 'eatmydata lost nothing: the lane cannot see a loss').toBeGreaterThan(0)
}, 600_000)
