// Parity: the one table of scenarios (sdk/scenarios.ts) drives the TypeScript client and
// the Python client against the built `dsh sdk` and the scripted model. Both must give the
// expected texts, turn/end reasons and files on disk; both method lists equal rpc/describe.
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { createClient } from '@dsh/sdk'
import { startMockModel, type MockModel } from '@dsh/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanEnv, DSH_BIN, ROOT, tempDir } from './helpers/dsh.js'
import { readSessionFile } from './helpers/session-file.js'
import { runTs } from './sdk/driver.js'
import { SCENARIOS, type DriverResult, type Scenario } from './sdk/scenarios.js'

const run = promisify(execFile)
let model: MockModel

beforeAll(async () => {
  model = await startMockModel()
})
afterAll(async () => {
  await model.close()
})

const serverEnv = (home: string) => ({ DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key' })

async function python(input: unknown, home: string, cwd: string): Promise<DriverResult> {
  const env = cleanEnv({ ...serverEnv(home), DSH_BIN, PYTHONPATH: join(ROOT, 'python') })
  const { stdout } = await run('python3', [join(ROOT, 'test/e2e/sdk/driver.py'), JSON.stringify(input)], { env, cwd, timeout: 90_000 })
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as DriverResult
}

/** Runs one scenario with one client in a fresh home and workspace; checks the world afterwards. */
async function play(scenario: Scenario, client: 'ts' | 'python'): Promise<DriverResult> {
  const home = tempDir('dsh-sdk-home-')
  const workspace = tempDir('dsh-sdk-ws-')
  model.setScript(scenario.script)
  model.requests.length = 0
  const input = { plan: scenario.plan, workspace }
  const result = client === 'ts'
    ? await runTs(input, { command: DSH_BIN, env: cleanEnv(serverEnv(home)), cwd: workspace })
    : await python(input, home, workspace)
  expect(model.failures, `${client}: the model's expectations`).toEqual([])
  expect({ texts: result.texts, reasons: result.reasons }, client).toEqual({ texts: scenario.expect.texts, reasons: scenario.expect.reasons })
  for (const [file, content] of Object.entries(scenario.expect.files ?? {})) {
    const path = join(workspace, file)
    expect(existsSync(path) ? readFileSync(path, 'utf8') : null, `${client}: ${file}`).toBe(content)
  }
  if (scenario.expect.seen) expect(result.seen, client).toEqual(scenario.expect.seen)
  // every session's log is on disk and holds its own prompts
  const prompts = scenario.plan.kind === 'cancel' ? [scenario.plan.prompt] : scenario.plan.prompts
  const logged = [...new Set(result.sessionIds)].flatMap((id) => readSessionFile(home, id).events
    .filter((e) => e.type === 'user/message')
    .map((e) => (e.data as { content: { text?: string }[] }).content.map((p) => p.text ?? '').join('')))
  expect(logged.sort(), `${client}: prompts in the session logs`).toEqual([...prompts].sort())
  return result
}

describe('sdk parity (TypeScript and Python clients, one table)', () => {
  it.each(SCENARIOS.map((s) => [s.name, s] as const))('%s', async (_name, scenario) => {
    const ts = await play(scenario, 'ts')
    const py = await play(scenario, 'python')
    expect({ texts: py.texts, reasons: py.reasons, seen: py.seen }).toEqual({ texts: ts.texts, reasons: ts.reasons, seen: ts.seen })
  })

  it("gives each client's method list exactly the methods rpc/describe serves over sdk", async () => {
    const home = tempDir('dsh-sdk-home-')
    await using client = await createClient({ command: DSH_BIN, env: cleanEnv(serverEnv(home)) })
    const described = await client.call('rpc/describe', {})
    const served = (described.methods as { name: string; carriers?: string[] }[]).filter((m) => m.carriers?.includes('sdk')).map((m) => m.name).sort()
    expect(served.length).toBeGreaterThan(20)
    expect([...client.methods].sort()).toEqual(served)
    const { stdout } = await run('python3', ['-c', 'import dsh_sdk, json; print(json.dumps(list(dsh_sdk.METHODS)))'], { env: cleanEnv({ PYTHONPATH: join(ROOT, 'python') }) })
    expect((JSON.parse(stdout) as string[]).sort()).toEqual(served)
  })
})
