import { mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { cachedParse, homeParseCacheDir, isDshError } from '@dsh/protocol'
import { composeProfile, openProfile, patchCache, type LayerOptions } from '../src/index.js'

// Issue 13 item 1: the parsed patch files are cached per install; the cache never changes
// what a launch composes or how a bad file fails.
const PATCH = `- insert:
    - id: a
      name: '@x/a'
      config: {k: 1, list: [x, y], nested: {deep: true}}
    - id: b
      name: ./b.js
- id: a
  config: ~
- id: b
  disabled: true
`

function setup(text = PATCH): { options: LayerOptions; uncached: LayerOptions; file: string; home: string } {
  const home = mkdtempSync(join(tmpdir(), 'dsh-pc-'))
  const profile = openProfile(home, 'mine', [])
  writeFileSync(profile.patchFile, text)
  const uncached: LayerOptions = { profile, home, dshRoot: home }
  return { options: { ...uncached, cache: patchCache(home, '1.0.0-test') }, uncached, file: profile.patchFile, home }
}

function failure(fn: () => unknown): string {
  try {
    fn()
    return 'ok'
  } catch (error) {
    return isDshError(error) ? `${error.code}: ${error.message} ${JSON.stringify(error.data)}` : String(error)
  }
}

const entries = (home: string) => readdirSync(homeParseCacheDir(home)).map((f) => join(homeParseCacheDir(home), f))

describe('the patch parse cache', () => {
  it('a cached launch composes exactly what an uncached one does, line numbers included', () => {
    const { options, uncached, home } = setup()
    const cold = composeProfile(options)
    expect(entries(home)).toHaveLength(1)
    const stored = readFileSync(entries(home)[0]!, 'utf8')
    const warm = composeProfile(options)
    expect(readFileSync(entries(home)[0]!, 'utf8')).toBe(stored) // served, not rewritten
    expect(warm).toEqual(cold)
    expect(warm).toEqual(composeProfile(uncached))
    expect(warm.rows.map((r) => r.row)).toEqual([{ id: 'a', name: '@x/a' }, { id: 'b', name: './b.js', disabled: true }])
  })

  it('an edit is seen at the next launch, even one that keeps the size and the mtime', () => {
    const { options, file } = setup()
    utimesSync(file, 1e9, 1e9)
    composeProfile(options)
    writeFileSync(file, PATCH.replace('./b.js', './c.js'))
    utimesSync(file, 1e9, 1e9)
    expect([statSync(file).mtimeMs, statSync(file).size]).toEqual([1e12, PATCH.length])
    expect(composeProfile(options).rows[1]!.row).toEqual({ id: 'b', name: './c.js', disabled: true })
    writeFileSync(file, PATCH.replace("config: ~\n", "config: {k: 9}\n"))
    expect(composeProfile(options).rows[0]!.row).toEqual({ id: 'a', name: '@x/a', config: { k: 9 } })
  })

  it('a corrupt cache entry is ignored and rebuilt', () => {
    const { options, uncached, home } = setup()
    composeProfile(options)
    const [entry] = entries(home)
    const text = readFileSync(entry!, 'utf8')
    for (const bad of [text.slice(0, 40), text.replace('@x/a', '@x/evil'), '']) {
      writeFileSync(entry!, bad)
      expect(composeProfile(options)).toEqual(composeProfile(uncached))
      expect(readFileSync(entry!, 'utf8')).toBe(text)
    }
  })

  it('an entry another dsh version or build wrote for the same file and text is not trusted', () => {
    const { options, uncached, home, file } = setup()
    const other = { dir: homeParseCacheDir(home), stamp: 'another build' }
    cachedParse(other, 'patch', file, PATCH, () => [{ type: 'insert', index: 0, line: 1, rows: [{ row: { id: 'evil', name: 'evil' }, line: 1 }] }])
    expect(composeProfile(options)).toEqual(composeProfile(uncached))
    expect(composeProfile({ ...options, cache: patchCache(home, '2.0.0-test') })).toEqual(composeProfile(uncached))
  })

  it('errors are unchanged: a broken edit of a cached file fails with file, line and column; a bad replacement names its line', () => {
    const { options, uncached, file } = setup()
    composeProfile(options)
    writeFileSync(file, `${PATCH}- id: a\n  config: {k: [\n`)
    const syntax = failure(() => composeProfile(options))
    expect(syntax).toMatch(new RegExp(`^PATCH_SYNTAX: ${file}:\\d+:\\d+: `))
    expect(failure(() => composeProfile(options))).toBe(syntax)
    expect(failure(() => composeProfile(uncached))).toBe(syntax)
    writeFileSync(file, `${PATCH}- id: nope\n  disabled: true\n`)
    const unknown = failure(() => composeProfile(options))
    expect(unknown).toContain(`ROW_UNKNOWN: ${file}:11: entry 4 replaces row "nope"`)
    expect(failure(() => composeProfile(options))).toBe(unknown) // now from the cache
    expect(failure(() => composeProfile(uncached))).toBe(unknown)
    writeFileSync(file, '- id: a\n  colour: red\n')
    expect(failure(() => composeProfile(options))).toContain(`PATCH_INVALID: ${file}:1: row "a": unknown key "colour"`)
  })
})
