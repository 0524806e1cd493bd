// The CommonJS bundle loader and its V8 code cache (decision 0085), on small hand-written
// bundles: files load once and see each other, run in strict mode like the ES modules they
// were; a cache entry is used only when it was written for this build and its checksum holds,
// and whatever is wrong with an entry (corrupt, truncated, another build's) costs a compile,
// never a wrong or failed run. The built dsh is covered in test/e2e/startup-lazy.test.ts.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { BundleLoader } from '../src/bundle-loader.js'
import { cacheKey, openCodeCache } from '../src/code-cache.js'

function bundle(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-cjs-'))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return dir
}

const host = { importModule: (url: string) => import(url), shared: {}, hooks: 'file:///hooks.js' }
const FILES = {
  'main.js': `const a = require('./a.js'); const { join } = require('node:path'); module.exports = { value: a.twice(21), joined: join('x', 'y'), url: __dshUrl, host: typeof __dshHost.load }`,
  'a.js': `let loads = (globalThis.__dshLoads ?? 0) + 1; globalThis.__dshLoads = loads; exports.twice = (n) => n * 2; exports.loads = loads`,
}

function run(dir: string, cacheRoot: string | undefined, build = 'build-1') {
  const cache = cacheRoot === undefined ? undefined : openCodeCache(cacheRoot, cacheKey(build, []))
  const loader = new BundleLoader({ dir, cache, host })
  const exports = loader.require('./main.js')
  return { loader, exports, cache }
}

describe('BundleLoader', () => {
  it('evaluates each file once, resolves ./ names in the bundle and anything else with Node, and hands in the file URL and host', () => {
    const dir = bundle(FILES)
    const loader = new BundleLoader({ dir, host })
    expect(loader.require('./main.js')).toEqual({ value: 42, joined: join('x', 'y'), url: pathToFileURL(join(dir, 'main.js')).href, host: 'function' })
    const a = loader.require('./a.js') as { loads: number }
    expect(loader.require('./a.js')).toBe(a)
    expect(loader.compiled).toEqual(['main.js', 'a.js'])
  })

  it('runs files in strict mode, as the ES modules they were built from', () => {
    const dir = bundle({ 'sloppy.js': 'undeclared = 1' })
    expect(() => new BundleLoader({ dir, host }).require('./sloppy.js')).toThrow(ReferenceError)
  })

  it('load() takes only URLs of files in the bundle directory', async () => {
    const dir = bundle(FILES)
    const loader = new BundleLoader({ dir, host })
    await expect(loader.load(pathToFileURL(join(dir, 'a.js')).href)).resolves.toMatchObject({ twice: expect.any(Function) })
    await expect(loader.load(pathToFileURL(join(tmpdir(), 'elsewhere.js')).href)).rejects.toThrow(/is not a file of the bundle/)
  })

  it('a file whose evaluation throws is not recorded as loaded (the next require throws again)', () => {
    const dir = bundle({ 'bad.js': `throw new Error('boom')` })
    const loader = new BundleLoader({ dir, host })
    expect(() => loader.require('./bad.js')).toThrow('boom')
    expect(() => loader.require('./bad.js')).toThrow('boom')
  })
})

describe('the code cache', () => {
  it('a first run compiles and writes an entry per file; the next run uses them and compiles nothing', () => {
    const dir = bundle(FILES)
    const root = mkdtempSync(join(tmpdir(), 'dsh-code-'))
    const first = run(dir, root)
    expect(first.loader.compiled).toEqual(['main.js', 'a.js'])
    first.loader.flush()
    expect(readdirSync(first.cache!.dir).sort()).toEqual(['a.js.bin', 'main.js.bin'])
    expect((statSync(first.cache!.dir).mode & 0o777).toString(8)).toBe('700')
    expect((statSync(join(first.cache!.dir, 'a.js.bin')).mode & 0o777).toString(8)).toBe('600')
    const second = run(dir, root)
    expect(second.exports).toEqual(first.exports)
    expect(second.loader.compiled).toEqual([]) // V8 accepted every entry
  })

  it('a corrupt or truncated entry is a miss: the file compiles, runs, and gets a good entry again', () => {
    const dir = bundle(FILES)
    const root = mkdtempSync(join(tmpdir(), 'dsh-code-'))
    const first = run(dir, root)
    first.loader.flush()
    const a = join(first.cache!.dir, 'a.js.bin')
    const main = join(first.cache!.dir, 'main.js.bin')
    const good = readFileSync(a)
    const flipped = Buffer.from(good)
    flipped[flipped.length - 1] = flipped[flipped.length - 1]! ^ 0xff
    writeFileSync(a, flipped)
    writeFileSync(main, readFileSync(main).subarray(0, 20))
    const second = run(dir, root)
    expect(second.exports).toEqual(first.exports)
    expect(second.loader.compiled.sort()).toEqual(['a.js', 'main.js'])
    second.loader.flush()
    expect(run(dir, root).loader.compiled).toEqual([])
  })

  it('an entry is only looked up for the build that wrote it: a same-length source of another build never runs stale code', () => {
    const one = bundle({ 'main.js': `module.exports = 'one'` })
    const two = bundle({ 'main.js': `module.exports = 'two'` })
    const root = mkdtempSync(join(tmpdir(), 'dsh-code-'))
    const first = run(one, root, 'build-1')
    first.loader.flush()
    // the new build's directory holds an entry V8 would take for the old source (same length)
    expect(run(two, root, 'build-2').exports).toBe('two')
    // why the key matters: V8 checks the source's length, not its text, so under the old key the
    // old entry runs (a third source: V8 also keeps compiled scripts in memory by their text)
    expect(run(bundle({ 'main.js': `module.exports = 'six'` }), root, 'build-1').exports).toBe('one')
    expect(cacheKey('build-1', [])).not.toBe(cacheKey('build-2', []))
    expect(cacheKey('build-1', [])).not.toBe(cacheKey('build-1', ['--max-old-space-size=100']))
  })

  it('an unwritable cache directory costs compiles, not the run', () => {
    const dir = bundle(FILES)
    const root = mkdtempSync(join(tmpdir(), 'dsh-code-'))
    writeFileSync(join(root, 'blocked'), 'a file where the cache root would be')
    const cache = openCodeCache(join(root, 'blocked'), cacheKey('b', []))
    const loader = new BundleLoader({ dir, cache, host })
    expect(loader.require('./main.js')).toMatchObject({ value: 42 })
    expect(() => loader.flush()).not.toThrow()
  })

  it('writes nothing on a file system with less than the reserve free (a small tmpfs, as root)', () => {
    const dir = bundle(FILES)
    const mnt = mkdtempSync(join(tmpdir(), 'dsh-code-small-'))
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt])
    try {
      const first = run(dir, join(mnt, 'cache', 'code'))
      first.loader.flush()
      expect(readdirSync(mnt)).toEqual([])
      expect(run(dir, join(mnt, 'cache', 'code')).exports).toEqual(first.exports)
    } finally {
      execFileSync('umount', ['-l', mnt])
    }
  })

  it('keeps the entry directories of the three newest other builds and removes older ones', () => {
    const dir = bundle(FILES)
    const root = mkdtempSync(join(tmpdir(), 'dsh-code-'))
    const old = ['o1', 'o2', 'o3', 'o4', 'o5']
    old.forEach((d, i) => {
      mkdirSync(join(root, d))
      const t = new Date(Date.now() - (10 - i) * 60_000)
      writeFileSync(join(root, d, 'x.bin'), '')
      utimesSync(join(root, d), t, t)
    })
    const first = run(dir, root)
    first.loader.flush()
    expect(readdirSync(root).sort()).toEqual([cacheKey('build-1', []), 'o3', 'o4', 'o5'].sort())
  })
})
