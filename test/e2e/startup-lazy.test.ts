// Start-up work a headless one-shot must not do (decisions 0051, 0060): modules only some runs
// use are loaded on first use, and dsh's own code loads from its bundle. Checked in the real
// process: a --require hook records every CommonJS module in the built dsh's module cache
// when it exits, and an --import hook records every ES module file it loads.
import { startMockModel, type MockModel } from '@dsh/testkit'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT, runDsh, tempDir } from './helpers/dsh.js'

let model: MockModel
beforeAll(async () => { model = await startMockModel() })
afterAll(async () => { await model.close() })

interface Loaded { hook: string; commonjs: string[]; esm: string[] }

/** Runs a one-shot of one bash step and returns the CommonJS and ES module files it loaded. */
async function loadedModules(): Promise<Loaded> {
  const dir = tempDir('dsh-lazy-')
  const hook = join(dir, 'hook.cjs')
  const out = join(dir, 'modules.json')
  const esmLog = join(dir, 'esm.txt')
  writeFileSync(hook, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(Object.keys(require.cache))))\n`)
  writeFileSync(join(dir, 'esm-hooks.mjs'), `import { appendFileSync } from 'node:fs'\nexport async function load(url, context, next) {\n  if (url.startsWith('file:')) appendFileSync(${JSON.stringify(esmLog)}, url + '\\n')\n  return next(url, context)\n}\n`)
  writeFileSync(join(dir, 'esm-register.mjs'), `import { register } from 'node:module'\nregister(${JSON.stringify(pathToFileURL(join(dir, 'esm-hooks.mjs')).href)})\n`)
  model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: 'true', description: 'noop' } }] }, { text: 'done' }])
  const result = await runDsh(['--profile', 'headless', 'go'], {
    cwd: dir,
    env: { DSH_HOME: join(dir, 'home'), DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key', NODE_OPTIONS: `--require ${hook} --import ${join(dir, 'esm-register.mjs')}` },
  })
  expect(result.code, result.stderr).toBe(0)
  expect(result.stdout).toBe('done\n')
  return { hook, commonjs: JSON.parse(readFileSync(out, 'utf8')) as string[], esm: readFileSync(esmLog, 'utf8').split('\n').filter(Boolean) }
}

describe('start-up loads only what the run uses', () => {
  it('a headless one-shot never loads ssh2 (the ssh world requires it on first connection)', async () => {
    const { hook, commonjs } = await loadedModules()
    expect(commonjs).toContain(hook) // the probe saw the module cache
    expect(commonjs.filter((m) => m.includes('/node_modules/ssh2/'))).toEqual([])
  })

  it('the built dsh loads its own modules and their dependencies from the bundle, not file by file', async () => {
    const { esm } = await loadedModules()
    const bundle = pathToFileURL(join(ROOT, 'packages/cli/dist/bundle')).href + '/'
    expect(esm.some((u) => u.startsWith(bundle))).toBe(true) // the probe saw the bundle
    // besides the bin script: no transpiled per-file module of a dsh package, no separately
    // loaded dependency (zod, cordis, yaml)
    const bin = pathToFileURL(join(ROOT, 'packages/cli/bin/dsh.js')).href
    expect(esm.filter((u) => !u.startsWith(bundle) && u !== bin && !u.includes('/dsh-lazy-'))).toEqual([])
    // rows the one-shot does not mount stay unloaded: the MCP client row is mounted, but the web
    // server and the ACP server are not, so their bundle files are not read
    expect(esm).not.toContain(`${bundle}web.server.js`)
    expect(esm).not.toContain(`${bundle}acp.server.js`)
    expect(esm).toContain(`${bundle}headless.runner.js`)
  })
})
