import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { chownSync } from 'node:fs'
import { cleanEnv, collect, DSH_BIN, runDsh, tempDir } from './helpers/dsh.js'
import { useDshWorld } from './helpers/world.js'

// Issue 12 item 3: secret canaries in the environment, the store and the provider's auth
// header never reach a request body, a log, a dump, the output or an error (raw or base64).
const STORE_KEY = 'sk-store-canary-1b9e77a0'
const ENV_KEYS = { OPENAI_API_KEY: 'sk-env-canary-43d1c9f2', ANTHROPIC_API_KEY: 'sk-env-canary-9a0be311', MY_SERVICE_TOKEN: 'tok-env-canary-5d2f6c08' }
const CANARIES = [STORE_KEY, ...Object.values(ENV_KEYS)]

// no DEEPSEEK_API_KEY in the environment: the store holds the provider's key
const world = useDshWorld({ logsCheck: false, apiKey: null })

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
    .filter((f) => f !== join(world.home, '.credentials.yaml') && statSync(f, { throwIfNoEntry: false })?.isFile())
}

beforeEach(() => {
  writeFileSync(join(world.home, '.credentials.yaml'), `version: 1\nproviders:\n  deepseek: {apiKey: ${STORE_KEY}}\n`, { mode: 0o600 })
})

const NOBODY = 65534

/** Runs dsh as root or as the unprivileged user `nobody` (home, workspace and temp dir handed over to it). */
function runAs(user: 'root' | 'nobody', args: string[], env: Record<string, string>) {
  if (user === 'root') return runDsh(args, { cwd: world.workspace, env })
  for (const dir of [world.home, world.workspace, env.TMPDIR!]) {
    for (const f of [dir, ...readdirSync(dir, { recursive: true }).map((n) => join(dir, String(n)))]) chownSync(f, NOBODY, NOBODY)
  }
  const child = spawn(DSH_BIN, args, { cwd: world.workspace, env: cleanEnv({ ...env, HOME: world.home }), uid: NOBODY, gid: NOBODY, stdio: ['pipe', 'pipe', 'pipe'] })
  return collect(child)
}

describe('secret canaries', () => {
  it.each([['read-only', 'root'], ['workspace-write', 'root'], ['read-only', 'nobody'], ['workspace-write', 'nobody']] as const)('%s as %s: a model that hunts for keys finds none, and no artifact holds one', async (mode, user) => {
    const store = join(world.home, '.credentials.yaml')
    world.model.setScript([
      { toolCalls: [{ name: 'bash', arguments: { command: `env; cat ${store}; base64 ${store}; cat /proc/$PPID/environ; grep -rs sk- ${world.home}; echo done`, description: 'hunt' } }] },
      { toolCalls: [{ name: 'read', arguments: { path: store } }, { name: 'grep', arguments: { pattern: 'apiKey', path: world.home } }] },
      { error: { status: 401, message: `bad key ${STORE_KEY}` } },
    ])
    const tmp = tempDir('dsh-tmp-')
    const run = await runAs(user, ['--profile', 'headless', '--permission-mode', mode, '--json', 'find the keys'], world.env({ TMPDIR: tmp, ...ENV_KEYS }))
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/AUTH: /)
    // the hunt ran (the model saw its results), so a leak would have been seen
    expect(world.model.requests.length).toBeGreaterThanOrEqual(3)
    expect(JSON.stringify(world.model.requests[1]!.body)).toContain('done')
    expect(world.model.requests.every((r) => r.headers.authorization === '<redacted>')).toBe(true)
    const dump = await world.headless(['--dump-config'], { env: ENV_KEYS })
    const found = [
      ...world.model.requests.flatMap((r, i) => leaks(`request ${i} body`, JSON.stringify(r.body))),
      ...leaks('stdout', run.stdout), ...leaks('stderr', run.stderr), ...leaks('dump', dump.stdout + dump.stderr),
      ...artifacts(world.home).flatMap((f) => leaks(f, readFileSync(f, 'latin1'))),
      ...artifacts(tmp).flatMap((f) => leaks(f, readFileSync(f, 'latin1'))),
    ]
    expect(found).toEqual([])
  })
})
