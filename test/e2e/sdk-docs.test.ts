// The README's SDK examples run as written (against the scripted model) and print the same
// final text in TypeScript and Python. (The method table reference, packages/host-api/README.md,
// is generated from the schemas and checked by packages/host/test/readme.test.ts.)
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { loadScript, startMockModel, type MockModel } from '@dsh/testkit'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { cleanEnv, DSH_BIN, ROOT, tempDir } from './helpers/dsh.js'

const run = promisify(execFile)
let model: MockModel
let scratch: string

beforeAll(async () => {
  model = await startMockModel()
  // inside the checkout, so `import '@dsh/sdk'` resolves as it does for a user of this install
  mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true })
  scratch = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'sdk-examples-'))
})
afterAll(async () => {
  await model.close()
  rmSync(scratch, { recursive: true, force: true })
})

function example(lang: 'ts' | 'python'): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const at = readme.indexOf(`<!-- sdk-example:${lang} -->`)
  expect(at, `README has the ${lang} example`).toBeGreaterThan(0)
  const match = /```\w+\n([\s\S]*?)```/.exec(readme.slice(at))
  return match![1]!
}

it.each(['ts', 'python'] as const)('runs the README %s example as written', async (lang) => {
  const code = example(lang)
  expect(code.trim().split('\n').length).toBeLessThanOrEqual(10)
  model.setScript(await loadScript(join(ROOT, 'packages/testkit/scripts/tools.yml')))
  const workspace = tempDir('dsh-sdk-example-ws-')
  const env = cleanEnv({ DSH_HOME: tempDir('dsh-sdk-example-home-'), DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock' })
  const file = join(scratch, lang === 'ts' ? 'example.mjs' : 'example.py')
  writeFileSync(file, code)
  const { stdout } = lang === 'ts'
    ? await run(process.execPath, [file], { cwd: workspace, env, timeout: 60_000 })
    : await run('python3', [file], { cwd: workspace, env: { ...env, DSH_BIN, PYTHONPATH: join(ROOT, 'python') }, timeout: 60_000 })
  expect(stdout).toBe('completed Those are the files in the current directory.\n')
  expect(model.failures).toEqual([])
})
