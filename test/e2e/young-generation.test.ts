import { startMockModel, type MockModel } from '@dsh/testkit'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runDsh, tempDir } from './helpers/dsh.js'

// Decision 0088: the launcher keeps V8's young generation at its initial semi-space size
// (a long session otherwise grows it to 2 × 16 MB of resident memory). Read from inside the
// real process: a preload records the new space's size when dsh exits.
let model: MockModel
beforeAll(async () => { model = await startMockModel() })
afterAll(async () => { await model.close() })

async function newSpaceAtExit(nodeOptions: string): Promise<number> {
  const dir = tempDir('dsh-young-')
  const out = join(dir, 'new-space')
  const preload = join(dir, 'preload.mjs')
  writeFileSync(preload, `import v8 from 'node:v8'\nimport fs from 'node:fs'\nprocess.on('exit', () => fs.writeFileSync(${JSON.stringify(out)}, String(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size)))\n`)
  model.setScript([
    ...Array.from({ length: 5 }, (_, i) => ({ toolCalls: [{ name: 'bash', arguments: { command: 'true', description: `step ${i}` } }] })),
    { text: 'done' },
  ])
  const result = await runDsh(['--profile', 'headless', '--permission-mode', 'danger-full-access', 'run the steps'], {
    cwd: dir, env: { DSH_HOME: join(dir, 'home'), DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key', NODE_OPTIONS: `--import ${preload} ${nodeOptions}` },
  })
  expect(result.code, result.stderr.slice(-2000)).toBe(0)
  expect(result.stdout).toBe('done\n')
  return Number(readFileSync(out, 'utf8'))
}

describe('the launcher bounds the young generation', () => {
  it('a headless run keeps the new space at V8\'s initial 2 × 1 MB semi-spaces', async () => {
    expect(await newSpaceAtExit('')).toBeLessThanOrEqual(2 * 1024 * 1024)
  })

  it('a semi-space flag the user gave wins (the same run grows the new space past 2 MB)', async () => {
    expect(await newSpaceAtExit('--max-semi-space-size=16')).toBeGreaterThan(2 * 1024 * 1024)
  })
})
