import { FAILPOINTS } from '@dsh/protocol'
import { startMockModel, type MockModel, type Step } from '@dsh/testkit'
import { expect } from 'vitest'
import { afterAll, beforeAll } from 'vitest'
import { collect, runDsh, spawnDsh, tempDir } from '../e2e/helpers/dsh.js'
import { defineLane, laneSeed, rng, scaled } from './lib.js'
import { expectContiguous, expectRepaired, expectShownAreStored, onlySessionId, printedEvents, sessionFile, storedSession } from './sessions.js'

// kill -9 lane: a 30-step bash+write session against the scripted model, killed at each
// named failpoint (hit 1, 2, 5) and at random moments; then the log is checked on disk and
// the session resumed.
const lane = defineLane('kill')
const random = rng(laneSeed('kill'))
const STEPS = 30

let model: MockModel
beforeAll(async () => { model = await startMockModel() })
afterAll(async () => { await model.close() })

/** 29 tool steps (odd: bash appends to trail.txt; even: write files/N.txt), then the answer. */
function thirtySteps(): Step[] {
  const steps: Step[] = []
  for (let n = 1; n < STEPS; n++) {
    steps.push(n % 2
      ? { toolCalls: [{ name: 'bash', arguments: { command: `echo step ${n} >> trail.txt`, description: `step ${n}` } }] }
      : { toolCalls: [{ name: 'write', arguments: { path: `files/${n}.txt`, content: `file of step ${n}\n` } }] })
  }
  steps.push({ text: 'all thirty steps done' })
  return steps
}

const env = (home: string, extra: Record<string, string> = {}) => ({ DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key', ...extra })

/** Runs the session; `kill` is either a failpoint spec or a delay after which the test sends SIGKILL. */
async function crashRun(kill: { failpoint: string } | { afterMs: number }) {
  const home = tempDir('dsh-rel-home-')
  const workspace = tempDir('dsh-rel-ws-')
  model.setScript(thirtySteps())
  const child = spawnDsh(['--profile', 'headless', '--json', 'run the thirty steps'], {
    cwd: workspace, env: env(home, 'failpoint' in kill ? { DSH_FAILPOINT: kill.failpoint } : {}),
  })
  const done = collect(child, { timeoutMs: 120_000 })
  let timer: NodeJS.Timeout | undefined
  if ('afterMs' in kill) timer = setTimeout(() => child.kill('SIGKILL'), kill.afterMs)
  const result = await done
  clearTimeout(timer)
  return { home, workspace, result }
}

async function checkAndResume(run: Awaited<ReturnType<typeof crashRun>>, where: string) {
  const { home, workspace, result } = run
  const id = onlySessionId(home)
  if (id === undefined) {
    // killed before the session file existed: nothing can have been shown
    expect(printedEvents(result.stdout), `${where}: events shown but no session file`).toEqual([])
    return
  }
  const crashed = storedSession(sessionFile(home, id))
  expectContiguous(crashed.events, where)
  expectShownAreStored(printedEvents(result.stdout), crashed.events, where)
  model.setScript([{ text: 'resumed after the crash' }])
  const resumed = await runDsh(['--profile', 'headless', '--json', '--resume', id, 'go on'], { cwd: workspace, env: env(home), timeoutMs: 60_000 })
  expect(resumed.code, `${where}: resume failed: ${resumed.stderr.slice(0, 400)}`).toBe(0)
  const after = storedSession(sessionFile(home, id))
  expect(after.tornBytes, `${where}: torn tail after resume`).toBe(0)
  expectContiguous(after.events, where)
  expect(JSON.stringify(after.events.slice(0, crashed.events.length)), `${where}: resume changed the crashed prefix`).toBe(JSON.stringify(crashed.events))
  expectShownAreStored(printedEvents(resumed.stdout), after.events, `${where} (resume)`)
  expectRepaired(crashed.events, after.events, where)
  expect(after.events.at(-1), where).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
}

for (const name of FAILPOINTS) {
  for (const hit of [1, 2, 5]) {
    lane.case(`failpoint ${name}:${hit}`, async () => {
      const run = await crashRun({ failpoint: `${name}:${hit}` })
      expect(run.result.signal, `failpoint ${name}:${hit} was not reached (exit ${run.result.code}): ${run.result.stderr.slice(0, 300)}`).toBe('SIGKILL')
      await checkAndResume(run, `${name}:${hit}`)
    }, 180_000)
  }
}

// random kills: a fraction of the time a whole run takes (measured in the first case), so
// the kills land in boot, in the steps and at the end
const kills = scaled(40)
const fractions = Array.from({ length: kills }, () => random())
let fullRunMs = 0
lane.case('the 30-step session completes when nothing kills it', async () => {
  const started = Date.now()
  const run = await crashRun({ afterMs: 600_000 })
  fullRunMs = Date.now() - started
  expect(run.result.code, run.result.stderr.slice(0, 400)).toBe(0)
  const id = onlySessionId(run.home)!
  const stored = storedSession(sessionFile(run.home, id))
  expect(stored.events.filter((e) => e.type === 'step/start')).toHaveLength(STEPS)
  expectShownAreStored(printedEvents(run.result.stdout), stored.events, 'full run')
}, 180_000)
fractions.forEach((fraction, k) => {
  lane.case(`random kill ${k + 1}/${kills} at ${(fraction * 100).toFixed(1)}% of a run`, async () => {
    expect(fullRunMs, 'the full run did not complete').toBeGreaterThan(0)
    const afterMs = Math.floor(fraction * fullRunMs)
    const run = await crashRun({ afterMs })
    await checkAndResume(run, `random kill after ${afterMs} ms`)
  }, 180_000)
})
