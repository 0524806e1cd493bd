import { repairEvents } from '@dsh/core'
import type { SessionEvent } from '@dsh/protocol'
import type { MockModel, Step } from '@dsh/testkit'
import { expect } from 'vitest'
import { collect, spawnDsh, tempDir, type RunResult } from '../e2e/helpers/dsh.js'
import { expectContiguous, expectRepaired, expectShownAreStored, onlySessionId, printedEvents, sessionFile, storedSession } from './sessions.js'

// The kill lane's moving parts: one dsh run of the 30-step bash+write session (fresh or
// resumed, killed at a failpoint, after a delay, or not at all) and the checks of what a
// kill left on disk. kill.test.ts composes them into cases.

export const STEPS = 30

/** 29 tool steps (odd: bash appends to trail.txt; even: write files/N.txt), then the answer. */
export function thirtySteps(): Step[] {
  const steps: Step[] = []
  for (let n = 1; n < STEPS; n++) {
    steps.push(n % 2
      ? { toolCalls: [{ name: 'bash', arguments: { command: `echo step ${n} >> trail.txt`, description: `step ${n}` } }] }
      : { toolCalls: [{ name: 'write', arguments: { path: `files/${n}.txt`, content: `file of step ${n}\n` } }] })
  }
  steps.push({ text: 'all thirty steps done' })
  return steps
}

/** A session's place: its own home and workspace; `id` once the session file exists. */
export interface Place { home: string; workspace: string; id?: string }

export const newPlace = (): Place => ({ home: tempDir('dsh-rel-home-'), workspace: tempDir('dsh-rel-ws-') })

export type Kill = { failpoint: string } | { afterMs: number } | 'none'

/**
 * One `--json` run against `model` (which must be this run's alone while it runs): a new
 * session in `place`, or a resume of `place.id`, running `script`.
 */
export async function runSession(model: MockModel, place: Place, kill: Kill, script: Step[] = thirtySteps()): Promise<RunResult> {
  model.setScript(script)
  const prompt = place.id === undefined ? ['run the thirty steps'] : ['--resume', place.id, 'go on']
  const child = spawnDsh(['--profile', 'headless', '--json', ...prompt], {
    cwd: place.workspace,
    env: {
      DSH_HOME: place.home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key',
      ...(typeof kill === 'object' && 'failpoint' in kill ? { DSH_FAILPOINT: kill.failpoint } : {}),
    },
  })
  const done = collect(child, { timeoutMs: 120_000 })
  const timer = typeof kill === 'object' && 'afterMs' in kill ? setTimeout(() => child.kill('SIGKILL'), kill.afterMs) : undefined
  try {
    return await done
  } finally {
    clearTimeout(timer)
  }
}

const core = (e: { type: string; data: unknown }) => JSON.stringify({ type: e.type, data: e.data })

/**
 * What one run (killed or not) left in `place`, given the events the file held before it
 * (`before`, [] for a new session): every complete line parses, seqs are contiguous, the
 * earlier events are unchanged, every event the run printed is stored identically, and what
 * the run added begins with the repair of `before` (the orphan calls of the previous crash
 * marked as synthetic errors, open steps and turns closed), a repair which is idempotent.
 * A run that exited 0 ends on a completed turn with nothing open. Returns the stored events.
 */
export function checkRun(place: Place, before: readonly SessionEvent[], run: RunResult, where: string): SessionEvent[] {
  const shown = printedEvents(run.stdout)
  const id = place.id ?? onlySessionId(place.home)
  if (id === undefined) {
    // killed before the session file existed: nothing can have been shown
    expect(shown, `${where}: events shown but no session file`).toEqual([])
    expect(run.code, `${where}: exited ${run.code} without a session file: ${run.stderr.slice(0, 300)}`).not.toBe(0)
    return []
  }
  place.id = id
  const stored = storedSession(sessionFile(place.home, id))
  const events = stored.events
  expectContiguous(events, where)
  expect(events.slice(0, before.length).map(core), `${where}: the run changed the events before it`).toEqual(before.map(core))
  expectShownAreStored(shown, events, where)
  const repair = repairEvents(before)
  const added = events.slice(before.length)
  const n = Math.min(repair.length, added.length)
  expect(added.slice(0, n).map(core), `${where}: what the resume appended does not begin with the repair of the crash`).toEqual(repair.slice(0, n).map(core))
  const repaired = [...before, ...repair.map((r, i) => ({ ...r, seq: before.length + i, time: 0 }) as SessionEvent)]
  expect(repairEvents(repaired), `${where}: repair is not idempotent`).toEqual([])
  if (run.code === 0) {
    expect(stored.tornBytes, `${where}: torn tail after a clean exit`).toBe(0)
    expectRepaired(before, events, where)
    expect(events.at(-1), where).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
  } else {
    expect(run.signal, `${where}: dsh failed instead of being killed (exit ${run.code}): ${run.stderr.slice(0, 400)}`).toBe('SIGKILL')
  }
  return events
}
