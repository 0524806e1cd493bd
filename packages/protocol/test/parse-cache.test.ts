import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { cachedParse, codeStamp, jsonSafe, type ParseCache } from '../src/parse-cache.js'

const dirs: string[] = []
function cacheIn(stamp = 's1'): ParseCache {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-pcache-'))
  dirs.push(dir)
  return { dir: join(dir, 'cache'), stamp }
}
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }) })

/** A parse that counts its calls. */
function counter<T>(make: (text: string) => T): { parse: (text: string) => T; calls: () => number } {
  let n = 0
  return { parse: (text) => { n++; return make(text) }, calls: () => n }
}
const entries = (cache: ParseCache) => readdirSync(cache.dir).map((f) => join(cache.dir, f))

describe('cachedParse', () => {
  it('parses once per text: the second call is served from the cache with an equal value', () => {
    const cache = cacheIn()
    const p = counter((t) => ({ text: t, n: [1, 2] }))
    expect(cachedParse(cache, 'k', '/a.yml', 'one', p.parse)).toEqual({ text: 'one', n: [1, 2] })
    expect(cachedParse(cache, 'k', '/a.yml', 'one', p.parse)).toEqual({ text: 'one', n: [1, 2] })
    expect(p.calls()).toBe(1)
    const [entry] = entries(cache)
    expect(statSync(entry!).mode & 0o777).toBe(0o600)
    expect(statSync(cache.dir).mode & 0o777).toBe(0o700)
  })

  it('a changed text, another path, kind or stamp is a miss (stale entries are never trusted)', () => {
    const cache = cacheIn()
    const p = counter((t) => t.toUpperCase())
    cachedParse(cache, 'k', '/a.yml', 'one', p.parse)
    expect(cachedParse(cache, 'k', '/a.yml', 'two', p.parse)).toBe('TWO')
    expect(cachedParse(cache, 'k', '/b.yml', 'two', p.parse)).toBe('TWO')
    expect(cachedParse(cache, 'other', '/a.yml', 'two', p.parse)).toBe('TWO')
    expect(cachedParse({ ...cache, stamp: 's2' }, 'k', '/a.yml', 'two', p.parse)).toBe('TWO')
    expect(p.calls()).toBe(5)
    // the rewritten entry serves the last text again
    expect(cachedParse({ ...cache, stamp: 's2' }, 'k', '/a.yml', 'two', p.parse)).toBe('TWO')
    expect(p.calls()).toBe(5)
  })

  it.each([
    ['truncated', (t: string) => t.slice(0, t.length >> 1)],
    ['not JSON', () => '\u0000garbage'],
    ['value altered, checksum kept', (t: string) => t.replace('"value":"', '"value":" ')],
    ['checksum altered', (t: string) => t.replace(/"sum":"[0-9a-f]/, '"sum":"x')],
    ['another format', (t: string) => t.replace('"v":1', '"v":99')],
    ['empty', () => ''],
  ])('a corrupt entry (%s) is ignored and rebuilt', (_name, corrupt) => {
    const cache = cacheIn()
    const p = counter((t) => ({ t }))
    cachedParse(cache, 'k', '/a.yml', 'one', p.parse)
    const [entry] = entries(cache)
    writeFileSync(entry!, corrupt(readFileSync(entry!, 'utf8')))
    expect(cachedParse(cache, 'k', '/a.yml', 'one', p.parse)).toEqual({ t: 'one' })
    expect(p.calls()).toBe(2)
    expect(cachedParse(cache, 'k', '/a.yml', 'one', p.parse)).toEqual({ t: 'one' })
    expect(p.calls()).toBe(2)
  })

  it('a parse error is thrown every time, never cached', () => {
    const cache = cacheIn()
    const p = counter(() => { throw new Error('bad line 3') })
    for (let i = 0; i < 2; i++) expect(() => cachedParse(cache, 'k', '/a.yml', 'x', p.parse)).toThrow('bad line 3')
    expect(p.calls()).toBe(2)
  })

  it('a value JSON would change (undefined key, Infinity, -0, a Date) is returned but not stored', () => {
    const cache = cacheIn()
    for (const value of [{ config: undefined }, { n: Infinity }, [-0], { d: new Date(0) }]) {
      const p = counter(() => value)
      expect(cachedParse(cache, 'k', '/a.yml', 'x', p.parse)).toBe(value)
      expect(cachedParse(cache, 'k', '/a.yml', 'x', p.parse)).toBe(value)
      expect(p.calls()).toBe(2)
    }
    expect(jsonSafe({ a: [1, 'b', null, true, { c: {} }] })).toBe(true)
  })

  it('an unwritable cache directory costs only the parse', () => {
    const cache = cacheIn()
    writeFileSync(join(cache.dir, '..', 'file'), '')
    const blocked = { ...cache, dir: join(cache.dir, '..', 'file', 'sub') }
    const p = counter((t) => t)
    expect(cachedParse(blocked, 'k', '/a.yml', 'x', p.parse)).toBe('x')
    expect(cachedParse(blocked, 'k', '/a.yml', 'x', p.parse)).toBe('x')
    expect(p.calls()).toBe(2)
    expect(readdirSync(join(cache.dir, '..'))).toEqual(['file'])
  })
})

describe('codeStamp', () => {
  it('changes when the module file is rewritten, and is undefined for a non-file URL', () => {
    const cache = cacheIn()
    const file = join(cache.dir, '..', 'mod.js')
    writeFileSync(file, 'a')
    const before = codeStamp(pathToFileURL(file).href)
    expect(before).toMatch(/^\d+:\d+:1:\d+$/)
    writeFileSync(file, 'ab')
    expect(codeStamp(pathToFileURL(file).href)).not.toBe(before)
    expect(codeStamp('data:text/javascript,0')).toBeUndefined()
    expect(codeStamp(pathToFileURL(join(cache.dir, 'missing.js')).href)).toBeUndefined()
  })
})
