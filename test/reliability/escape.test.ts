import { spawnSync } from 'node:child_process'
import { startMockModel, type Step } from '@dsh/testkit'
import { expect } from 'vitest'
import { ATTACKS, type Attack } from './escape-corpus.js'
import { ensureUser, escapes, makeWorld, runAsUser, snapshot, type World } from './escape-world.js'
import { defineLane, laneSeed, need } from './lib.js'

// escape corpus: every attack, through bash and through the file tools, under read-only and
// workspace-write, run by an unprivileged user the test creates; zero escapes, checked on
// the world (escape-world.ts). Under danger-full-access at least 90% must escape: the
// negative control that proves the checks see an escape.
const lane = defineLane('escape')
laneSeed('escape')

let user: { uid: number; gid: number } | undefined

type Channel = 'bash' | 'file tools'
type Mode = 'read-only' | 'workspace-write' | 'danger-full-access'

function steps(attack: Attack, channel: Channel, w: World): Step[] {
  const calls = channel === 'bash' ? [{ name: 'bash', arguments: { command: attack.bash!(w) } }] : attack.file!(w)
  return [...calls.map((call) => ({ toolCalls: [call] })), { text: 'done' }]
}

interface Outcome { escaped: string[]; code: number | null; stderr: string; requests: number; steps: number }

/** One attempt in a fresh world with its own mock model (cases run concurrently). */
async function attempt(attack: Attack, channel: Channel, mode: Mode): Promise<Outcome> {
  need('bwrap', 'bubblewrap')
  for (const command of attack.needs ?? []) need(command)
  user ??= ensureUser()
  const w = await makeWorld(user)
  const model = await startMockModel()
  try {
    if (attack.name.includes('::1')) expect(w.tcp6Port, 'prerequisite missing: no IPv6 loopback (::1)').toBeGreaterThan(0)
    attack.setup?.(w)
    spawnSync('chown', ['-R', '-h', `${user.uid}:${user.gid}`, w.ws, w.home])
    w.before = snapshot(w)
    const script = steps(attack, channel, w)
    model.setScript(script)
    const stop = { done: false }
    const racing = attack.race?.(w, stop)
    const run = await runAsUser(user, w, ['--profile', 'headless', '--permission-mode', mode, `try: ${attack.name}`], { DEEPSEEK_BASE_URL: model.url }, attack.tmp === 'shared' ? w.sharedTmp : w.tmp)
    stop.done = true
    await racing
    if (attack.settleMs) await new Promise((r) => setTimeout(r, attack.settleMs))
    const saw = model.requests.map((r) => JSON.stringify(r.body)).join('\n')
    return { escaped: [...escapes(w, saw), ...(attack.check?.(w, saw) ?? []).map((f) => `expected: ${f}`)], code: run.code, stderr: run.stderr, requests: model.requests.length, steps: script.length }
  } finally {
    await model.close()
    await w.close()
    spawnSync('rm', ['-rf', w.root])
  }
}

const channels = (a: Attack): Channel[] => [...(a.bash ? ['bash' as const] : []), ...(a.file ? ['file tools' as const] : [])]

for (const mode of ['read-only', 'workspace-write'] as const) {
  for (const attack of ATTACKS) {
    for (const channel of channels(attack)) {
      lane.case(`${mode} · ${attack.category} · ${attack.name} (${channel}): no escape`, async () => {
        const o = await attempt(attack, channel, mode)
        // the attempt must really have been made: dsh ran as the user and every step reached the model
        expect(o.code, `dsh did not complete as the unprivileged user (${mode}): ${o.stderr.slice(0, 500)}`).toBe(0)
        expect(o.requests, 'not every step of the attempt ran').toBe(o.steps)
        expect(o.escaped, 'escaped').toEqual([])
      }, 120_000, { concurrent: true })
    }
  }
}

// negative control: with no sandbox the same attempts must mostly get out
const outcomes: { name: string; escaped: boolean; counted: boolean }[] = []
for (const attack of ATTACKS) {
  for (const channel of channels(attack)) {
    lane.case(`danger-full-access · ${attack.name} (${channel}): runs`, async () => {
      // the control asks whether an attack *can* get out unconfined: one that held (a race lost
      // under load, a /proc read of a process that had already exited) gets two more tries
      let o = await attempt(attack, channel, 'danger-full-access')
      for (let retry = 0; retry < 2 && o.escaped.length === 0 && !attack.holdsUnconfined; retry++) o = await attempt(attack, channel, 'danger-full-access')
      outcomes.push({ name: `${attack.name} (${channel})${o.code === 0 ? '' : ` [dsh exit ${o.code}]`}`, escaped: o.escaped.length > 0, counted: !attack.holdsUnconfined })
    }, 300_000, { concurrent: true })
  }
}
lane.case('negative control: under danger-full-access at least 90% of the corpus escapes', () => {
  const total = ATTACKS.reduce((n, a) => n + channels(a).length, 0)
  expect(outcomes.length, 'not every danger-full-access attempt ran').toBe(total)
  const counted = outcomes.filter((o) => o.counted)
  const escaped = counted.filter((o) => o.escaped).length
  process.stdout.write(`reliability escape: danger-full-access control: ${escaped}/${counted.length} escaped (${outcomes.filter((o) => o.escaped).length}/${total} of the whole corpus; ${total - counted.length} hold unconfined by design); held: ${outcomes.filter((o) => !o.escaped).map((o) => o.name).join('; ')}\n`)
  expect(escaped / counted.length).toBeGreaterThanOrEqual(0.9)
})
