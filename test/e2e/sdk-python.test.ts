// Runs the Python client's pytest suite (python/tests) against the built dsh, so `npm test`
// covers it. Any pytest failure fails this test; so does exit 5 ("no tests collected").
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { cleanEnv, ROOT } from './helpers/dsh.js'

it('passes the Python client tests (python3 -m pytest python/tests)', () => {
  const run = spawnSync('python3', ['-m', 'pytest', join(ROOT, 'python', 'tests'), '-q', '-p', 'no:cacheprovider'], {
    cwd: ROOT, env: cleanEnv({ PYTHONDONTWRITEBYTECODE: '1' }), encoding: 'utf8', timeout: 240_000,
  })
  const output = `${run.stdout}\n${run.stderr}`
  expect(run.error, output).toBeUndefined()
  expect(run.status, output).toBe(0)
  expect(output).toMatch(/\d+ passed/)
}, 300_000)
