import { copyFileSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { startMockModel, type MockModel, type Step } from '@dsh/testkit'
import { afterAll, beforeAll, expect } from 'vitest'
import { spawn } from 'node:child_process'
import { cleanEnv, collect, DSH_BIN, runDsh, spawnDsh, tempDir } from '../e2e/helpers/dsh.js'
import { defineLane, laneSeed, need, needFile, needRoot, rng, scaled, sh } from './lib.js'
import { expectContiguous, onlySessionId, printedEvents, sessionFile, storedSession } from './sessions.js'
import type { SessionEvent } from '@dsh/protocol'

// power-cut lane: the sessions folder is an ext4 file system on a loop device. At a random
// moment the writer is stopped (SIGSTOP) and the backing image copied: the copy holds what
// reached the disk (the upper page cache is not in it), as after a power cut. The copy is
// mounted (journal replay) and the session recovered from it. Every event `--json` showed
// (shown means durable) must be in the copy. Under eatmydata (fsync a no-op) shown events
// must go missing in some cycles: the negative control that proves the lane sees a loss.
const lane = defineLane('powercut')
const random = rng(laneSeed('powercut'))

let model: MockModel
beforeAll(async () => { model = await startMockModel() })
afterAll(async () => { await model.close() })

const env = (home: string) => ({ DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key' })

function script(): Step[] {
  const steps: Step[] = []
  for (let n = 1; n < 20; n++) {
    steps.push(n % 2
      ? { toolCalls: [{ name: 'bash', arguments: { command: `echo ${n} >> trail.txt` } }] }
      : { toolCalls: [{ name: 'write', arguments: { path: `f${n}.txt`, content: `step ${n}\n` } }] })
  }
  steps.push({ text: 'done' })
  return steps
}

function prerequisites() {
  needRoot('loop devices and mounts')
  need('mkfs.ext4', 'e2fsprogs')
  need('losetup', 'mount')
  needFile('/dev/loop-control', 'loop devices')
}

/** An ext4 image attached to a loop device and mounted at `dir`; the journal commits rarely (commit=60). */
function mountImage(image: string, dir: string): () => void {
  mkdirSync(dir, { recursive: true })
  const device = sh(`losetup -f --show ${image}`).trim()
  try {
    sh(`mount -t ext4 -o commit=60 ${device} ${dir}`)
  } catch (error) {
    sh(`losetup -d ${device}`, { allowFail: true })
    throw error
  }
  return () => {
    sh(`umount ${dir}`, { allowFail: true })
    sh(`losetup -d ${device}`, { allowFail: true })
  }
}

interface Cycle { shown: SessionEvent[]; recovered: SessionEvent[]; lost: string[]; resumed: { code: number | null; stderr: string } | undefined }

/** One power cut at `fraction` of a run's length; returns what was shown and what the copy holds. */
async function cycle(fraction: number, runMs: number, eatmydata: boolean): Promise<Cycle> {
  const base = tempDir('dsh-rel-power-')
  const image = join(base, 'disk.img')
  const home = join(base, 'home')
  const workspace = join(base, 'ws')
  mkdirSync(workspace)
  sh(`truncate -s 32M ${image} && mkfs.ext4 -q -F ${image}`)
  const unmount = mountImage(image, join(home, 'sessions'))
  let unmountCopy = () => undefined as void
  try {
    model.setScript(script())
    const args = ['--profile', 'headless', '--json', 'go']
    const writer = eatmydata
      // eatmydata(1) preloads libeatmydata: fsync and fdatasync return 0 without reaching the disk
      ? spawn('eatmydata', [DSH_BIN, ...args], { cwd: workspace, env: cleanEnv(env(home)), stdio: ['pipe', 'pipe', 'pipe'] })
      : spawnDsh(args, { cwd: workspace, env: env(home) })
    const done = collect(writer, { timeoutMs: 60_000 })
    await new Promise((r) => setTimeout(r, Math.floor(fraction * runMs)))
    writer.kill('SIGSTOP')
    // the power cut: what the loop device has written to its backing file, nothing more
    const copy = join(base, 'copy.img')
    copyFileSync(image, copy)
    writer.kill('SIGKILL')
    const result = await done
    unmount()
    const home2 = join(base, 'recovered')
    unmountCopy = mountImage(copy, join(home2, 'sessions'))
    const shown = printedEvents(result.stdout)
    const id = onlySessionId(home2) ?? onlySessionId(home)
    if (id === undefined) return { shown, recovered: [], lost: shown.map((e) => `${e.seq} ${e.type}`), resumed: undefined }
    let recovered: SessionEvent[] = []
    try {
      recovered = storedSession(sessionFile(home2, id)).events
    } catch {
      recovered = []
    }
    const lost = shown.filter((e) => JSON.stringify(recovered[e.seq]) !== JSON.stringify(e)).map((e) => `${e.seq} ${e.type}`)
    expectContiguous(recovered, 'recovered copy')
    let resumed: Cycle['resumed']
    if (recovered.length) {
      model.setScript([{ text: 'recovered' }])
      const r = await runDsh(['--profile', 'headless', '--resume', id, 'go on'], { cwd: workspace, env: env(home2) })
      resumed = { code: r.code, stderr: r.stderr }
    }
    return { shown, recovered, lost, resumed }
  } finally {
    unmountCopy()
    unmount()
    rmSync(base, { recursive: true, force: true })
  }
}

let runMs = 0
lane.case('calibration: the session completes on the loop file system', async () => {
  prerequisites()
  const base = tempDir('dsh-rel-power-')
  const image = join(base, 'disk.img')
  const home = join(base, 'home')
  sh(`truncate -s 32M ${image} && mkfs.ext4 -q -F ${image}`)
  const unmount = mountImage(image, join(home, 'sessions'))
  try {
    model.setScript(script())
    const started = Date.now()
    const result = await runDsh(['--profile', 'headless', '--json', 'go'], { cwd: base, env: env(home) })
    runMs = Date.now() - started
    expect(result.code, result.stderr.slice(0, 400)).toBe(0)
  } finally {
    unmount()
    rmSync(base, { recursive: true, force: true })
  }
}, 120_000)

const cycles = scaled(10)
for (let k = 0; k < cycles; k++) {
  const fraction = 0.15 + random() * 0.85
  lane.case(`power cut ${k + 1}/${cycles} at ${(fraction * 100).toFixed(1)}% of a run: zero shown (fsynced) events lost, the copy resumes`, async () => {
    prerequisites()
    expect(runMs, 'calibration did not run').toBeGreaterThan(0)
    const c = await cycle(fraction, runMs, false)
    expect(c.lost, `shown on stdout but missing after the power cut (${c.shown.length} shown, ${c.recovered.length} recovered)`).toEqual([])
    if (c.resumed) expect(c.resumed.code, `resume from the copy failed: ${c.resumed.stderr.slice(0, 400)}`).toBe(0)
  }, 120_000)
}

const controls = scaled(3)
const controlFractions = Array.from({ length: controls }, () => 0.5 + random() * 0.5)
lane.case(`negative control: under eatmydata, ${controls} power cuts lose shown events`, async () => {
  prerequisites()
  need('eatmydata')
  expect(runMs, 'calibration did not run').toBeGreaterThan(0)
  let lost = 0
  for (const fraction of controlFractions) lost += (await cycle(fraction, runMs, true)).lost.length
  expect(lost, 'eatmydata lost nothing: the lane cannot see a loss').toBeGreaterThan(0)
}, 300_000)
