// Start-up work a headless one-shot must not do (decisions 0051, 0060, 0063): modules only some
// runs use are loaded on first use, dsh's own code loads from its bundle, and YAML that did not
// change since the last launch is not parsed again; dsh's bundle compiles through its code cache (0085). Checked in the real process: a --require
// hook records every CommonJS module in the built dsh's module cache when it exits, and an
// --import hook records every ES module file it loads.
import { startMockModel, type MockModel } from '@dsh/testkit'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT, runDsh, tempDir, type RunResult } from './helpers/dsh.js'

let model: MockModel
beforeAll(async () => { model = await startMockModel() })
afterAll(async () => { await model.close() })

interface Launch { result: RunResult; hook: string; modules: string[]; esm: string[] }

/** A scratch dir whose `launch()` runs a one-shot of one bash step and reports the CommonJS and ES module files it loaded. */
function scratch(): { dir: string; home: string; launch: (args?: string[]) => Promise<Launch> } {
  const dir = tempDir('dsh-lazy-')
  const home = join(dir, 'home')
  const hook = join(dir, 'hook.cjs')
  const out = join(dir, 'modules.json')
  const esmLog = join(dir, 'esm.txt')
  writeFileSync(hook, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(Object.keys(require.cache))))\n`)
  writeFileSync(join(dir, 'esm-hooks.mjs'), `import { appendFileSync } from 'node:fs'\nexport async function load(url, context, next) {\n  if (url.startsWith('file:')) appendFileSync(${JSON.stringify(esmLog)}, url + '\\n')\n  return next(url, context)\n}\n`)
  writeFileSync(join(dir, 'esm-register.mjs'), `import { register } from 'node:module'\nregister(${JSON.stringify(pathToFileURL(join(dir, 'esm-hooks.mjs')).href)})\n`)
  const launch = async (args = ['--profile', 'headless', 'go']): Promise<Launch> => {
    model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: 'true', description: 'noop' } }] }, { text: 'done' }])
    model.requests.length = 0
    writeFileSync(out, '[]')
    writeFileSync(esmLog, '')
    const result = await runDsh(args, {
      cwd: dir,
      env: { DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key', NODE_OPTIONS: `--require ${hook} --import ${join(dir, 'esm-register.mjs')}` },
    })
    const esm = existsSync(esmLog) ? readFileSync(esmLog, 'utf8').split('\n').filter(Boolean) : []
    return { result, hook, modules: JSON.parse(readFileSync(out, 'utf8')) as string[], esm }
  }
  return { dir, home, launch }
}

/** The code cache directory of the one build that ran (decision 0085). */
function codeDir(home: string): string {
  const dirs = readdirSync(join(home, 'cache', 'code'))
  expect(dirs).toHaveLength(1)
  return join(home, 'cache', 'code', dirs[0]!)
}
const codeEntries = (home: string) => readdirSync(codeDir(home))
const stamps = (dir: string) => Object.fromEntries(readdirSync(dir).map((f) => { const st = statSync(join(dir, f)); return [f, `${st.ino}:${st.mtimeMs}:${st.size}`] }))

const yamlModules = (modules: string[]) => modules.filter((m) => m.includes('/node_modules/yaml/'))
const cacheDir = (home: string) => join(home, 'cache', 'parsed')

describe('start-up loads only what the run uses', () => {
  it('a headless one-shot never loads ssh2 (the ssh world requires it on first connection)', async () => {
    const { launch } = scratch()
    const { result, hook, modules } = await launch()
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe('done\n')
    expect(modules).toContain(hook) // the probe saw the module cache
    // the hook sees CommonJS dependencies the run does use (yaml parses the new profile)
    expect(yamlModules(modules).length).toBeGreaterThan(0)
    expect(modules.filter((m) => m.includes('/node_modules/ssh2/'))).toEqual([])
  })

  it('the built dsh loads its own modules and their dependencies from the bundle, not file by file', async () => {
    const { home, launch } = scratch()
    const { result, esm } = await launch()
    expect(result.code, result.stderr).toBe(0)
    // the only ES module is the bin script: it requires the CommonJS bundle's loader; no
    // transpiled per-file module of a dsh package, no separately loaded ES dependency (zod, cordis)
    const bin = pathToFileURL(join(ROOT, 'packages/cli/bin/dsh.js')).href
    expect(esm).toContain(bin) // the probe saw the bin script
    expect(esm.filter((u) => u !== bin && !u.includes('/dsh-lazy-'))).toEqual([])
    // the bundle's files the run loaded each got a code cache entry (decision 0085): rows the
    // one-shot does not mount stay unloaded — the MCP client row is mounted, but the web server
    // and the ACP server are not, so their bundle files are not read
    const entries = codeEntries(home)
    expect(entries).toContain('headless.runner.js.bin')
    expect(entries).toContain('dsh.js.bin')
    expect(entries).not.toContain('web.server.js.bin')
    expect(entries).not.toContain('acp.server.js.bin')
  })

  it('a second launch uses the code cache as written; a corrupt or truncated entry is replaced and the run still answers', async () => {
    const { home, launch } = scratch()
    expect((await launch()).result.code).toBe(0)
    const dir = codeDir(home)
    const before = stamps(dir)
    const second = await launch()
    expect([second.result.code, second.result.stdout], second.result.stderr).toEqual([0, 'done\n'])
    // nothing rewritten: every entry was accepted (a rejected or missing one is written at exit)
    expect(stamps(dir)).toEqual(before)
    const runner = join(dir, 'headless.runner.js.bin')
    const chunk = readdirSync(dir).find((f) => f.startsWith('chunk-'))!
    const garbage = Buffer.alloc(statSync(runner).size, 0x5a)
    writeFileSync(runner, garbage)
    writeFileSync(join(dir, chunk), readFileSync(join(dir, chunk)).subarray(0, 40))
    const third = await launch()
    expect([third.result.code, third.result.stdout], third.result.stderr).toEqual([0, 'done\n'])
    expect(readFileSync(runner).equals(garbage)).toBe(false)
    expect(statSync(join(dir, chunk)).size).toBeGreaterThan(40)
    // and with the cache turned off nothing is read or written
    const off = tempDir('dsh-lazy-off-')
    model.setScript([{ text: 'done' }])
    const plain = await runDsh(['--profile', 'headless', 'go'], { cwd: off, env: { DSH_HOME: join(off, 'home'), DSH_CODE_CACHE: 'off', DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key' } })
    expect([plain.code, plain.stdout], plain.stderr).toEqual([0, 'done\n'])
    expect(existsSync(join(off, 'home', 'cache', 'code'))).toBe(false)
  })

  it('a launch whose patch and settings files did not change loads no yaml; the first launch and an edit do', async () => {
    const { home, launch } = scratch()
    mkdirSync(home, { recursive: true })
    writeFileSync(join(home, 'settings.yaml'), 'version: 1\nmodel: cached-model-1\n')
    const first = await launch()
    expect(first.result.code, first.result.stderr).toBe(0)
    expect(yamlModules(first.modules).length).toBeGreaterThan(0)
    const second = await launch()
    expect(second.result.code, second.result.stderr).toBe(0)
    expect(second.result.stdout).toBe('done\n')
    expect(yamlModules(second.modules)).toEqual([])
    expect((model.requests[0]?.body as { model?: string }).model).toBe('cached-model-1')
    // an edit of settings is seen (and parsed), the next launch is cached again
    writeFileSync(join(home, 'settings.yaml'), 'version: 1\nmodel: cached-model-2\n')
    const edited = await launch()
    expect(edited.result.code, edited.result.stderr).toBe(0)
    expect((model.requests[0]?.body as { model?: string }).model).toBe('cached-model-2')
    expect(yamlModules(edited.modules).length).toBeGreaterThan(0)
    expect(yamlModules((await launch()).modules)).toEqual([])
  })

  it('an edited patch file is seen, a broken one fails closed naming file and line, a corrupt cache is rebuilt', async () => {
    const { home, launch } = scratch()
    expect((await launch()).result.code).toBe(0)
    const patch = join(home, 'profiles', 'headless', 'cordis.patch.yml')
    writeFileSync(patch, '- id: agent\n  config: {maxSteps: [\n')
    const broken = await launch()
    expect(broken.result.code).toBe(1)
    expect(broken.result.stderr).toMatch(new RegExp(`^PATCH_SYNTAX: ${patch}:3:1: `, 'm'))
    expect(broken.result.stderr).not.toMatch(/\n\s+at /)
    // one step allowed: the scripted bash call is the last thing the agent may do
    writeFileSync(patch, '- id: agent\n  config: {maxSteps: 1}\n')
    const limited = await launch()
    expect(limited.result.stdout).not.toBe('done\n')
    expect(model.requests).toHaveLength(1)
    writeFileSync(patch, '')
    expect((await launch()).result.stdout).toBe('done\n')
    for (const entry of readdirSync(cacheDir(home))) writeFileSync(join(cacheDir(home), entry), '{"v":1,"key":"x"')
    const rebuilt = await launch()
    expect(rebuilt.result.code, rebuilt.result.stderr).toBe(0)
    expect(rebuilt.result.stdout).toBe('done\n')
    expect(yamlModules(rebuilt.modules).length).toBeGreaterThan(0)
    expect(yamlModules((await launch()).modules)).toEqual([])
  })
})

describe('a checkout that is not built', () => {
  it('says NOT_BUILT with the hint, no stack trace, when the bundle or its build record is missing', async () => {
    const { spawnSync } = await import('node:child_process')
    const pkg = tempDir('dsh-unbuilt-')
    mkdirSync(join(pkg, 'bin'))
    writeFileSync(join(pkg, 'bin', 'dsh.js'), readFileSync(join(ROOT, 'packages/cli/bin/dsh.js')))
    writeFileSync(join(pkg, 'package.json'), '{"type": "module"}\n')
    const run = () => spawnSync(process.execPath, [join(pkg, 'bin', 'dsh.js'), '--profile', 'headless', '--dump-config'], { encoding: 'utf8', env: { PATH: process.env.PATH, DSH_HOME: join(pkg, 'home') } })
    const expected = 'NOT_BUILT: dsh is not built\n  hint: run `npm run build` in the dsh checkout\n'
    expect([run().status, run().stderr]).toEqual([1, expected])
    // the loader is there, the bundle it runs is not
    mkdirSync(join(pkg, 'dist', 'bundle-cjs'), { recursive: true })
    writeFileSync(join(pkg, 'dist', 'bundle-cjs', 'loader.cjs'), readFileSync(join(ROOT, 'packages/cli/dist/bundle-cjs/loader.cjs')))
    expect([run().status, run().stderr]).toEqual([1, expected])
  })
})

describe('the code cache and $DSH_HOME', () => {
  it('--help and --version in a home that does not exist leave none behind; a launch in an existing home caches what it ran', async () => {
    const dir = tempDir('dsh-nohome-')
    const home = join(dir, 'home')
    for (const arg of ['--help', '--version']) {
      const run = await runDsh([arg], { env: { DSH_HOME: home } })
      expect(run.code, run.stderr).toBe(0)
      expect(existsSync(home)).toBe(false)
    }
    mkdirSync(home)
    expect((await runDsh(['--version', '--profile', 'headless'], { env: { DSH_HOME: home } })).code).toBe(0)
    expect(codeEntries(home)).toContain('dsh.js.bin')
  })

  it('runs on a Node 20 without crypto.hash (20.10 and 20.11, which engines allow): the loader hashes with createHash', async () => {
    const dir = tempDir('dsh-nohash-')
    const home = join(dir, 'home')
    mkdirSync(home)
    // node:crypto as Node 20.10/20.11 has it: crypto.hash came in 20.12
    const preload = join(dir, 'no-crypto-hash.cjs')
    writeFileSync(preload, "delete require('node:crypto').hash\n")
    model.setScript([{ text: 'done' }])
    const run = await runDsh(['--profile', 'headless', 'go'], { cwd: dir, env: { DSH_HOME: home, NODE_OPTIONS: `--require ${preload}`, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key' } })
    expect([run.code, run.stdout, run.stderr.includes('TypeError')], run.stderr).toEqual([0, 'done\n', false])
    expect(codeEntries(home)).toContain('dsh.js.bin')
  })
})
