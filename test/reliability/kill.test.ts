import { FAILPOINTS, type SessionEvent } from '@dsh/protocol'
import { startMockModel, type MockModel } from '@dsh/testkit'
import { afterAll, expect } from 'vitest'
import { defineLane, laneSeed, rng, scaled } from './lib.js'
import { checkRun, newPlace, runSession, STEPS, type Place } from './kill-run.js'

// kill -9 lane: a 30-step bash+write session against the scripted model, killed at each
// named failpoint (hit 1, 2, 5) and at random moments; after every kill the log is checked
// on disk (kill-run.ts) and the session resumed.
//
// The random kills run in CHAINS concurrent chains, each with its own mock model. A chain
// reuses its session across kills: the next kill resumes the session the last one crashed
// (so the resume of a crash is itself killed at a random moment, and checked on what it
// appended), and now and then (FRESH_SHARE) it starts a new session in a new home, so kills
// also land in a fresh boot. Every chain ends by resuming its session to a completed turn.
const lane = defineLane('kill')
const random = rng(laneSeed('kill'))
const CHAINS = 4
const FRESH_SHARE = 0.1

const models: MockModel[] = []
async function ownModel(): Promise<MockModel> {
  const model = await startMockModel()
  models.push(model)
  return model
}
afterAll(async () => { await Promise.all(models.map((m) => m.close())) })

for (const name of FAILPOINTS) {
  for (const hit of [1, 2, 5]) {
    lane.case(`failpoint ${name}:${hit}`, async () => {
      const model = await ownModel()
      const place = newPlace()
      const crashed = await runSession(model, place, { failpoint: `${name}:${hit}` })
      expect(crashed.signal, `failpoint ${name}:${hit} was not reached (exit ${crashed.code}): ${crashed.stderr.slice(0, 300)}`).toBe('SIGKILL')
      const events = checkRun(place, [], crashed, `${name}:${hit}`)
      if (place.id === undefined) return
      const resumed = await runSession(model, place, 'none', [{ text: 'resumed after the crash' }])
      expect(resumed.code, `${name}:${hit}: resume failed: ${resumed.stderr.slice(0, 400)}`).toBe(0)
      checkRun(place, events, resumed, `${name}:${hit} (resume)`)
    }, 180_000, { concurrent: true })
  }
}

interface Chain {
  model?: MockModel
  place: Place
  /** The session file's events after the chain's last run. */
  events: SessionEvent[]
  /** How long the chain's uncut run took (the kills are fractions of it). */
  fullRunMs: number
  /** The chain's previous case: a chain's cases run one after another. */
  tail: Promise<void>
}
const chains: Chain[] = Array.from({ length: CHAINS }, () => ({ place: newPlace(), events: [], fullRunMs: 0, tail: Promise.resolve() }))
const outcome = { killed: 0, completed: 0, beforeFile: 0 }

/** Runs `work` after the chain's previous case (failed or not); cases start in order, so chains never wait in a circle. */
async function inChain(chain: Chain, work: () => Promise<void>): Promise<void> {
  const previous = chain.tail
  let release!: () => void
  chain.tail = new Promise((r) => { release = r })
  try {
    await previous
    await work()
  } finally {
    release()
  }
}

/** Resumes the chain's session with no kill: it must complete, repaired. */
async function finish(chain: Chain, where: string): Promise<void> {
  if (chain.place.id === undefined) return
  const run = await runSession(chain.model!, chain.place, 'none', [{ text: 'resumed after the kills' }])
  expect(run.code, `${where}: the resume failed: ${run.stderr.slice(0, 400)}`).toBe(0)
  chain.events = checkRun(chain.place, chain.events, run, `${where} (final resume)`)
}

chains.forEach((chain, c) => {
  lane.case(`chain ${c + 1}: the 30-step session completes when nothing kills it`, () => inChain(chain, async () => {
    chain.model = await ownModel()
    const started = Date.now()
    const run = await runSession(chain.model, chain.place, 'none')
    chain.fullRunMs = Date.now() - started
    expect(run.code, run.stderr.slice(0, 400)).toBe(0)
    chain.events = checkRun(chain.place, [], run, 'full run')
    expect(chain.events.filter((e) => e.type === 'step/start')).toHaveLength(STEPS)
  }), 180_000, { concurrent: true })
})

// the kills: a uniform fraction of the chain's uncut run (boot, steps and the end)
const kills = scaled(200)
const plan = Array.from({ length: kills }, () => ({ fraction: random(), fresh: random() < FRESH_SHARE }))
plan.forEach(({ fraction, fresh }, k) => {
  const chain = chains[k % CHAINS]!
  lane.case(`random kill ${k + 1}/${kills} at ${(fraction * 100).toFixed(1)}% of a run (chain ${(k % CHAINS) + 1}, ${fresh ? 'new session' : 'resumed session'})`, () => inChain(chain, async () => {
    expect(chain.fullRunMs, 'the chain\'s uncut run did not complete').toBeGreaterThan(0)
    const where = `random kill ${k + 1}`
    if (fresh || chain.place.id === undefined) {
      await finish(chain, `${where}: the session left for a new one`)
      chain.place = newPlace()
      chain.events = []
    }
    const afterMs = Math.floor(fraction * chain.fullRunMs)
    const run = await runSession(chain.model!, chain.place, { afterMs })
    chain.events = checkRun(chain.place, chain.events, run, `${where} after ${afterMs} ms`)
    if (run.code === 0) outcome.completed++
    else outcome.killed++
    if (chain.place.id === undefined) outcome.beforeFile++
  }), 180_000, { concurrent: true })
})

chains.forEach((chain, c) => {
  lane.case(`chain ${c + 1}: the session resumes to a completed turn after its kills`, () => inChain(chain, () => finish(chain, `chain ${c + 1}`)), 180_000, { concurrent: true })
})

lane.case('the random kills landed (most runs were killed, not completed)', () => {
  process.stdout.write(`reliability kill: random kills: ${outcome.killed} killed (${outcome.beforeFile} before the session file existed), ${outcome.completed} completed before their kill\n`)
  expect(outcome.killed + outcome.completed, 'not every random kill ran').toBe(kills)
  expect(outcome.killed, 'fewer than half of the random kills landed').toBeGreaterThanOrEqual(kills / 2)
})
