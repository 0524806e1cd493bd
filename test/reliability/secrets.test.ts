import { randomBytes } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startMockModel, type MockModel, type Step } from '@dsh/testkit'
import { afterAll, beforeAll, expect } from 'vitest'
import { runDsh, tempDir } from '../e2e/helpers/dsh.js'
import { defineLane, laneSeed } from './lib.js'

// secrets lane: canary keys in the credentials store (the key actually used, so it is also
// the provider's Authorization header), in the environment (every provider's variable and a
// generic token), then a model that tries to read them every way it can. Every artifact is
// scanned, raw, base64 (3 alignments) and hex: session logs, meta files, stdout/stderr,
// --dump-config, spill files and temp roots, request bodies and headers the mock recorded.
// Zero hits outside the store itself.
const lane = defineLane('secrets')
laneSeed('secrets')

let model: MockModel
beforeAll(async () => { model = await startMockModel() })
afterAll(async () => { await model.close() })

const canary = (label: string) => `sk-canary-${label}-${randomBytes(12).toString('hex')}`

/** The canary and the forms an exfiltration would use: base64 at three alignments, hex. */
const ENCODING_NAMES = ['raw', 'hex', 'base64', 'base64+1', 'base64+2']

export function encodings(secret: string): string[] {
  const out = [secret, Buffer.from(secret).toString('hex')]
  for (let shift = 0; shift < 3; shift++) {
    const b64 = Buffer.from('x'.repeat(shift) + secret).toString('base64')
    // drop the characters that depend on the prefix or the padding
    out.push(b64.slice(Math.ceil((shift * 4) / 3) + 1, -4))
  }
  return out
}

function writeStore(home: string, key: string): void {
  writeFileSync(join(home, '.credentials.yaml'), `version: 1\nproviders:\n  deepseek:\n    apiKey: ${key}\n`, { mode: 0o600 })
}

function filesUnder(dir: string, skip: (path: string) => boolean = () => false): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    let entries: string[]
    try {
      entries = readdirSync(d)
    } catch {
      return
    }
    for (const e of entries) {
      const p = join(d, e)
      if (skip(p)) continue
      let st
      try {
        st = statSync(p)
      } catch {
        continue
      }
      if (st.isDirectory()) walk(p)
      else if (st.isFile()) out.push(p)
    }
  }
  walk(dir)
  return out
}

/** The attempts a hostile model makes; results flow back into the log and the next request. */
function exfiltration(home: string): Step[] {
  const store = join(home, '.credentials.yaml')
  const bash = (command: string) => ({ toolCalls: [{ name: 'bash', arguments: { command } }] })
  return [
    bash('env'),
    bash(`cat ${store}`),
    bash('cat "$DSH_HOME/.credentials.yaml" ~/.dsh/.credentials.yaml'),
    bash(`base64 ${store}; xxd -p ${store} | tr -d '\\n'`),
    bash("tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/self/environ"),
    bash('for p in /proc/[0-9]*; do tr "\\0" "\\n" < $p/environ 2>/dev/null; done | grep -i key | sort -u'),
    bash(`cp ${store} ./stolen.yaml; cat ./stolen.yaml`),
    bash('(env; seq 1 300000) | cat'),
    { toolCalls: [{ name: 'read', arguments: { path: store } }] },
    { toolCalls: [{ name: 'grep', arguments: { pattern: 'sk-canary', path: home } }] },
    { toolCalls: [{ name: 'ls', arguments: { path: home } }] },
    { text: 'nothing found' },
  ]
}

for (const mode of ['workspace-write', 'read-only'] as const) {
  lane.case(`${mode}: a model hunting for keys gets none; no artifact holds a canary`, async () => {
    const base = tempDir('dsh-rel-secrets-')
    const home = join(base, 'home')
    const workspace = join(base, 'ws')
    const tmp = join(base, 'tmp')
    for (const d of [home, workspace, tmp]) mkdirSync(d)
    const secrets = { store: canary('store'), envDeepseek: canary('env-deepseek'), envOpenai: canary('env-openai'), envAnthropic: canary('env-anthropic'), envGeneric: canary('env-token') }
    writeStore(home, secrets.store)
    model.setScript([])
    model.requests.length = 0
    const env = {
      DSH_HOME: home, HOME: base, TMPDIR: tmp, DEEPSEEK_BASE_URL: model.url,
      DEEPSEEK_API_KEY: secrets.envDeepseek, OPENAI_API_KEY: secrets.envOpenai, ANTHROPIC_API_KEY: secrets.envAnthropic, GITHUB_TOKEN: secrets.envGeneric,
    }
    model.setScript(exfiltration(home))
    const run = await runDsh(['--profile', 'headless', '--permission-mode', mode, 'find the keys'], { cwd: workspace, env, timeoutMs: 90_000 })
    expect(run.code, `the run failed: ${run.stderr.slice(0, 500)}`).toBe(0)
    // the store's key was the one used: it reached the provider, in the Authorization header only
    expect(model.requests.length).toBeGreaterThanOrEqual(exfiltration(home).length)
    expect(model.requests.every((r) => r.headers['authorization'] === '<redacted>'), 'no Authorization header on a request').toBe(true)
    const dump = await runDsh(['--profile', 'headless', '--dump-config'], { cwd: workspace, env })
    model.setScript([{ error: { status: 401, message: `invalid key ${secrets.store}` } }])
    const denied = await runDsh(['--profile', 'headless', 'again'], { cwd: workspace, env })
    const artifacts: [string, string][] = [
      ['stdout', run.stdout], ['stderr', run.stderr], ['--dump-config', dump.stdout + dump.stderr], ['401 run', denied.stdout + denied.stderr],
      ...model.requests.map((r, i): [string, string] => [`request ${i}`, JSON.stringify({ body: r.body, headers: r.headers })]),
      ...[...filesUnder(home, (p) => p === join(home, '.credentials.yaml')), ...filesUnder(workspace), ...filesUnder(tmp)]
        .map((p): [string, string] => [p, readFileSync(p).toString('latin1')]),
    ]
    // wrapped output (base64 breaks lines at 76) is scanned with the line breaks taken out too
    artifacts.push(...artifacts.map(([where, text]): [string, string] => [`${where} (unwrapped)`, text.replace(/\\n|\r|\n/g, '')]))
    const hits: string[] = []
    for (const [label, value] of Object.entries(secrets)) {
      encodings(value).forEach((form, n) => { for (const [where, text] of artifacts) if (text.includes(form)) hits.push(`${label} (${ENCODING_NAMES[n]}) in ${where}${process.env.RELDEBUG ? `: …${text.slice(Math.max(0, text.indexOf(form) - 80), text.indexOf(form) + 80)}…` : ""}`) })
    }
    expect([...new Set(hits)], 'canaries found outside the store').toEqual([])
  }, 180_000)
}

lane.case('danger-full-access: the file tools still refuse the store by name', async () => {
  const base = tempDir('dsh-rel-secrets-')
  const home = join(base, 'home')
  const workspace = join(base, 'ws')
  for (const d of [home, workspace]) mkdirSync(d)
  const secret = canary('store')
  writeStore(home, secret)
  model.requests.length = 0
  model.setScript([
    { toolCalls: [{ name: 'read', arguments: { path: join(home, '.credentials.yaml') } }] },
    { toolCalls: [{ name: 'grep', arguments: { pattern: 'sk-canary', path: home } }] },
    { text: 'done' },
  ])
  const run = await runDsh(['--profile', 'headless', '--permission-mode', 'danger-full-access', 'read it'], { cwd: workspace, env: { DSH_HOME: home, HOME: base, DEEPSEEK_BASE_URL: model.url } })
  expect(run.code, run.stderr.slice(0, 400)).toBe(0)
  const bodies = model.requests.map((r) => JSON.stringify(r.body)).join('\n')
  for (const form of encodings(secret)) expect(bodies.includes(form), 'the store reached the model through a file tool').toBe(false)
  expect(bodies, 'the refusal does not name the store').toMatch(/credentials/i)
}, 120_000)
