// Start-up work a headless one-shot must not do (decision 0051): modules only some runs
// use are loaded on first use. Checked in the real process: a --require hook records
// every CommonJS module in the built dsh's module cache when it exits.
import { startMockModel, type MockModel } from '@dsh/testkit'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runDsh, tempDir } from './helpers/dsh.js'

let model: MockModel
beforeAll(async () => { model = await startMockModel() })
afterAll(async () => { await model.close() })

/** Runs a one-shot of one bash step and returns the paths of the CommonJS modules it loaded. */
async function loadedModules(): Promise<string[]> {
  const dir = tempDir('dsh-lazy-')
  const hook = join(dir, 'hook.cjs')
  const out = join(dir, 'modules.json')
  writeFileSync(hook, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(Object.keys(require.cache))))\n`)
  model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: 'true', description: 'noop' } }] }, { text: 'done' }])
  const result = await runDsh(['--profile', 'headless', 'go'], {
    cwd: dir,
    env: { DSH_HOME: join(dir, 'home'), DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key', NODE_OPTIONS: `--require ${hook}` },
  })
  expect(result.code, result.stderr).toBe(0)
  expect(result.stdout).toBe('done\n')
  return JSON.parse(readFileSync(out, 'utf8')) as string[]
}

describe('start-up loads only what the run uses', () => {
  it('a headless one-shot never loads ssh2 (the ssh world requires it on first connection)', async () => {
    const modules = await loadedModules()
    // the hook sees CommonJS dependencies the run does use (yaml parses the profile)
    expect(modules.some((m) => m.includes('/node_modules/yaml/'))).toBe(true)
    expect(modules.filter((m) => m.includes('/node_modules/ssh2/'))).toEqual([])
  })
})
