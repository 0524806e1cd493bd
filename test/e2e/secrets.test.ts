import { startMockModel, type MockModel } from '@dsh/testkit'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { chownSync } from 'node:fs'
import { cleanEnv, collect, DSH_BIN, runDsh, tempDir } from './helpers/dsh.js'

// Issue 12 item 3: secret canaries in the environment, the store and the provider's auth
// header never reach a request body, a log, a dump, the output or an error (raw or base64).
const STORE_KEY = 'sk-store-canary-1b9e77a0'
const ENV_KEYS = { OPENAI_API_KEY: 'sk-env-canary-43d1c9f2', ANTHROPIC_API_KEY: 'sk-env-canary-9a0be311', MY_SERVICE_TOKEN: 'tok-env-canary-5d2f6c08' }
const CANARIES = [STORE_KEY, ...Object.values(ENV_KEYS)]

let model: MockModel
let home: string
let workspace: string

/** The canary, raw, and its base64 forms at the three byte alignments (the part that does not depend on neighbours). */
function forms(secret: string): string[] {
  return [secret, ...[0, 1, 2].map((k) => {
    const enc = Buffer.from('\0'.repeat(k) + secret).toString('base64')
    return enc.slice(Math.ceil((k * 4) / 3) + 1, enc.length - 4)
  })]
}

function leaks(label: string, text: string): string[] {
  return CANARIES.flatMap((c) => forms(c).filter((f) => text.includes(f)).map((f) => `${label}: ${c}${f === c ? '' : ' (base64)'}`))
}

/** Every regular file under `dir`, except the store itself. */
function artifacts(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true }).map((f) => join(dir, String(f)))
    .filter((f) => f !== join(home, '.credentials.yaml') && statSync(f, { throwIfNoEntry: false })?.isFile())
}

beforeAll(async () => { model = await startMockModel() })
afterAll(async () => { await model.close() })
beforeEach(() => {
  home = tempDir('dsh-home-')
  workspace = tempDir('dsh-ws-')
  writeFileSync(join(home, '.credentials.yaml'), `version: 1\nproviders:\n  deepseek: {apiKey: ${STORE_KEY}}\n`, { mode: 0o600 })
  model.requests.length = 0
})

const NOBODY = 65534

/** Runs dsh as root or as the unprivileged user `nobody` (home, workspace and temp dir handed over to it). */
function runAs(user: 'root' | 'nobody', args: string[], env: Record<string, string>) {
  if (user === 'root') return runDsh(args, { cwd: workspace, env })
  for (const dir of [home, workspace, env.TMPDIR!]) {
    for (const f of [dir, ...readdirSync(dir, { recursive: true }).map((n) => join(dir, String(n)))]) chownSync(f, NOBODY, NOBODY)
  }
  const child = spawn(DSH_BIN, args, { cwd: workspace, env: cleanEnv({ ...env, HOME: home }), uid: NOBODY, gid: NOBODY, stdio: ['pipe', 'pipe', 'pipe'] })
  return collect(child)
}

describe('secret canaries', () => {
  it.each([['read-only', 'root'], ['workspace-write', 'root'], ['read-only', 'nobody'], ['workspace-write', 'nobody']] as const)('%s as %s: a model that hunts for keys finds none, and no artifact holds one', async (mode, user) => {
    const store = join(home, '.credentials.yaml')
    model.setScript([
      { toolCalls: [{ name: 'bash', arguments: { command: `env; cat ${store}; base64 ${store}; cat /proc/$PPID/environ; grep -rs sk- ${home}; echo done`, description: 'hunt' } }] },
      { toolCalls: [{ name: 'read', arguments: { path: store } }, { name: 'grep', arguments: { pattern: 'apiKey', path: home } }] },
      { error: { status: 401, message: `bad key ${STORE_KEY}` } },
    ])
    const tmp = tempDir('dsh-tmp-')
    const run = await runAs(user, ['--profile', 'headless', '--permission-mode', mode, '--json', 'find the keys'], { DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, TMPDIR: tmp, ...ENV_KEYS })
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/AUTH: /)
    // the hunt ran (the model saw its results), so a leak would have been seen
    expect(model.requests.length).toBeGreaterThanOrEqual(3)
    expect(JSON.stringify(model.requests[1]!.body)).toContain('done')
    expect(model.requests.every((r) => r.headers.authorization === '<redacted>')).toBe(true)
    const dump = await runDsh(['--profile', 'headless', '--dump-config'], { cwd: workspace, env: { DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, ...ENV_KEYS } })
    const found = [
      ...model.requests.flatMap((r, i) => leaks(`request ${i} body`, JSON.stringify(r.body))),
      ...leaks('stdout', run.stdout), ...leaks('stderr', run.stderr), ...leaks('dump', dump.stdout + dump.stderr),
      ...artifacts(home).flatMap((f) => leaks(f, readFileSync(f, 'latin1'))),
      ...artifacts(tmp).flatMap((f) => leaks(f, readFileSync(f, 'latin1'))),
    ]
    expect(found).toEqual([])
  })
})
