import { linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import { cachedParse, homeParseCacheDir, isDshError, type SandboxMode } from '@dsh/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupDirs, execTree, policyFor, tempDir } from './helpers.js'

// Issue 12 item 3: the model cannot read dsh's secrets, through the file seam or a sandboxed command.
const CANARY = 'sk-canary-7f3a91d2e4'
let root: Context
let home: string
let ws: string
let tmp: string
let store: string
let cacheEntry: string
let savedHome: string | undefined

beforeAll(async () => {
  savedHome = process.env.DSH_HOME
  ws = tempDir('ws')
  tmp = tempDir('tmproot')
  // a home inside the workspace: the worst case, the store is under a writable root
  home = path.join(ws, 'dot-dsh')
  mkdirSync(path.join(home, 'profiles', 'p'), { recursive: true })
  store = path.join(home, '.credentials.yaml')
  writeFileSync(store, `version: 1\nproviders:\n  deepseek: {apiKey: ${CANARY}}\n`, { mode: 0o600 })
  writeFileSync(path.join(home, 'profiles', 'p', 'cordis.patch.yml'), `- id: mcp\n  config: {servers: {gh: {command: x, env: {GH_TOKEN: ${CANARY}}}}}\n`)
  symlinkSync(store, path.join(ws, 'innocent.yaml'))
  linkSync(store, path.join(ws, 'hardlink.yaml'))
  // the launcher's parse cache holds the parsed patch file, token included
  const patch = path.join(home, 'profiles', 'p', 'cordis.patch.yml')
  cachedParse({ dir: homeParseCacheDir(home), stamp: 't' }, 'patch', patch, readFileSync(patch, 'utf8'), () => [{ token: CANARY }])
  cacheEntry = path.join(homeParseCacheDir(home), readdirSync(homeParseCacheDir(home))[0]!)
  expect(readFileSync(cacheEntry, 'utf8')).toContain(CANARY)
  linkSync(cacheEntry, path.join(ws, 'cache-link.json'))
  process.env.DSH_HOME = home
  root = await execTree()
})
afterAll(() => {
  if (savedHome === undefined) delete process.env.DSH_HOME
  else process.env.DSH_HOME = savedHome
  cleanupDirs()
})

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'ok'
  } catch (error) {
    return isDshError(error) ? error.code : String(error)
  }
}

const MODES: SandboxMode[] = ['read-only', 'workspace-write', 'danger-full-access']

describe('secret files and the file seam', () => {
  it.each(MODES)('%s: reading the store directly, by symlink or by hard link is refused by name', async (mode) => {
    const policy = policyFor(mode, ws, tmp)
    for (const p of [store, path.join(ws, 'innocent.yaml'), path.join(ws, 'hardlink.yaml'), path.join(home, 'profiles', 'p', 'cordis.patch.yml'), cacheEntry]) {
      const error = await root.fs.readFile(p).then(() => undefined, (e: unknown) => e)
      expect(isDshError(error, 'PATH_DENIED'), p).toBe(true)
      expect((error as Error).message).toContain("it is one of dsh's secret files")
      expect((error as Error).message).not.toContain(CANARY)
      expect(await failure(root.fs.write(p, 'x', policy))).toBe('PATH_DENIED')
    }
    expect(readFileSync(store, 'utf8')).toContain(CANARY)
  })

  it('an atomic-write temp file of the store is refused too; other files read as before', async () => {
    const temp = path.join(home, '..credentials.yaml.123.456.tmp')
    writeFileSync(temp, CANARY)
    expect(await failure(root.fs.readFile(temp))).toBe('PATH_DENIED')
    // any file in the parse cache directory (a temp file of a cache write, a future entry)
    const cacheTemp = `${cacheEntry}.99.abc.tmp`
    writeFileSync(cacheTemp, CANARY)
    expect(await failure(root.fs.readFile(cacheTemp))).toBe('PATH_DENIED')
    expect(await failure(root.fs.write(path.join(homeParseCacheDir(home), 'new.json'), 'x', policyFor('danger-full-access', ws, tmp)))).toBe('PATH_DENIED')
    writeFileSync(path.join(ws, 'plain.txt'), 'hello')
    expect(new TextDecoder().decode(await root.fs.readFile(path.join(ws, 'plain.txt')))).toBe('hello')
    expect(await root.fs.isSecret(path.join(ws, 'plain.txt'))).toBe(false)
  })
})

describe('secret files and the sandbox', () => {
  it.each(['read-only', 'workspace-write'] as const)('%s: cat, a symlink and a copy of the store read nothing; it cannot be replaced', async (mode) => {
    let output = ''
    const script = `cat ${store}; cat innocent.yaml; cat hardlink.yaml; cp ${store} ${tmp}/copy && cat ${tmp}/copy; cat ${home}/profiles/p/cordis.patch.yml; cat ${cacheEntry}; `
      + `echo stolen > ${store}; mv ${store} ${tmp}/moved; base64 ${store}; echo end`
    const argv = await root.sandbox.wrap(['bash', '-c', script], policyFor(mode, ws, tmp))
    await root.subprocess.run(argv, { cwd: ws, onData: (c) => { output += c.toString() } })
    expect(output).toContain('end')
    expect(output).not.toContain(CANARY)
    expect(output).not.toContain(Buffer.from(CANARY).toString('base64').slice(0, 12))
    expect(readFileSync(store, 'utf8')).toContain(CANARY)
  })

  it.each(['read-only', 'workspace-write'] as const)('%s: the parse cache directory is hidden whole, a file written into it after the wrap too; a hard link to an entry still reads nothing', async (mode) => {
    const cacheDir = homeParseCacheDir(home)
    const link = path.join(ws, 'cache-link.json')
    const argv = await root.sandbox.wrap(['bash', '-c', `ls -A ${cacheDir}; echo listed; cat ${cacheDir}/*; cat ${link}; echo x > ${cacheDir}/planted; echo end`], policyFor(mode, ws, tmp))
    // the sandbox was built before this file existed (as a cache write's temp file during a long command)
    const late = path.join(cacheDir, `late-${mode}.json`)
    writeFileSync(late, CANARY)
    let output = ''
    await root.subprocess.run(argv, { cwd: ws, onData: (c) => { output += c.toString() } })
    expect(output).toMatch(/^listed\n/) // an empty listing
    expect(output).toContain('end')
    expect(output).not.toContain(CANARY)
    expect(readdirSync(cacheDir)).not.toContain('planted')
    expect(argv.filter((a) => a.startsWith(cacheDir))).toEqual([cacheDir, cacheDir]) // `--tmpfs DIR --remount-ro DIR`, nothing per entry
  })
})
