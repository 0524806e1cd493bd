import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { isDshError } from '@dsh/protocol'
import { compose, listProfiles, openProfile, patchTemplate, readProfileManifest, writeProfileBundles } from '../src/index.js'

const home = () => mkdtempSync(join(tmpdir(), 'dsh-home-'))

function codeOf(fn: () => unknown): string {
  try {
    fn()
    return 'ok'
  } catch (error) {
    return isDshError(error) ? `${error.code}: ${error.message}${error.hint ? ` | ${error.hint}` : ''}` : String(error)
  }
}

describe('profiles', () => {
  it('creates a template on first use with a versioned package.json and a commented patch', () => {
    const h = home()
    const p = openProfile(h, 'acp')
    expect(p).toEqual({
      name: 'acp', dir: join(h, 'profiles/acp'), packageFile: join(h, 'profiles/acp/package.json'), patchFile: join(h, 'profiles/acp/cordis.patch.yml'),
      bundles: ['@dsh/bundle-base', '@dsh/bundle-acp'], created: true, notes: [],
    })
    expect(JSON.parse(readFileSync(p.packageFile, 'utf8'))).toEqual({ name: 'dsh-profile-acp', private: true, dsh: { profile: { version: 1, bundles: ['@dsh/bundle-base', '@dsh/bundle-acp'] } } })
    expect(readFileSync(p.patchFile, 'utf8')).toBe(patchTemplate('acp'))
    // the template patch is all comments: it composes to nothing
    expect(compose([{ file: p.patchFile, text: patchTemplate('acp') }]).rows).toEqual([])
    expect(openProfile(h, 'acp')).toEqual({ ...p, created: false })
  })

  it('an unknown profile that is no template lists existing profiles and templates', () => {
    const h = home()
    openProfile(h, 'web')
    expect(codeOf(() => openProfile(h, 'nope'))).toBe(`UNKNOWN_PROFILE: no profile named "nope" in ${join(h, 'profiles')} | existing profiles: web; templates: headless, acp, web, sdk`)
    expect(existsSync(join(h, 'profiles/nope'))).toBe(false)
    expect(codeOf(() => openProfile(h, '../evil'))).toBe('PROFILE_NAME_INVALID: invalid profile name "../evil" | use letters, digits, ".", "_" or "-"')
    expect(openProfile(h, 'mine', []).bundles).toEqual([])
    expect(listProfiles(h)).toEqual(['mine', 'web'])
  })

  it('migrates a v0 profile manifest on read and writes v1', () => {
    const h = home()
    const dir = join(h, 'profiles/old')
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'x', dependencies: { a: '1' }, dsh: { bundles: ['@dsh/bundle-base'] } }))
    const p = openProfile(h, 'old')
    expect(p.bundles).toEqual(['@dsh/bundle-base'])
    expect(p.notes).toEqual([`${join(dir, 'package.json')}: migrated profile from v0 (dsh.bundles) to v1 (dsh.profile.bundles); rewritten the next time dsh saves it`])
    writeProfileBundles(p.packageFile, ['@dsh/bundle-base', 'extra'])
    expect(JSON.parse(readFileSync(p.packageFile, 'utf8'))).toEqual({ name: 'x', dependencies: { a: '1' }, dsh: { profile: { version: 1, bundles: ['@dsh/bundle-base', 'extra'] } } })
    expect(openProfile(h, 'old').notes).toEqual([])
  })

  it('a damaged profile manifest names the file and the key', () => {
    const h = home()
    const file = join(h, 'p.json')
    const cases = [
      ['{', `PROFILE_INVALID: ${file}: Expected property name or '}' in JSON at position 1`],
      ['{"dsh": {"profile": {"version": 1, "bundles": ["a", 3]}}}', `PROFILE_INVALID: ${file}: key dsh.profile.bundles[1] must be a package name`],
      ['{"dsh": {"profile": {"version": 9, "bundles": []}}}', `PROFILE_INVALID: ${file}: key dsh.profile.version is 9; this dsh reads up to 1 | the profile was written by a newer dsh; upgrade dsh`],
      ['{"name": "x"}', `PROFILE_INVALID: ${file}: key dsh.profile is missing or not an object`],
    ]
    expect(cases.map(([text]) => { writeFileSync(file, text!); return codeOf(() => readProfileManifest(file)).replace(/ \(line \d+ column \d+\)$/, '') })).toEqual(cases.map(([, m]) => m))
  })

  it('a $DSH_HOME that is a file: PROFILE_WRITE_FAILED naming the path, not an INTERNAL error from the clean-up', () => {
    const h = join(home(), 'home-file')
    writeFileSync(h, 'not a directory')
    expect(codeOf(() => openProfile(h, 'headless'))).toBe(
      `PROFILE_WRITE_FAILED: creating profile headless in ${join(h, 'profiles/headless')} failed: ${h} is a file, not a directory (ENOTDIR) | make ${h} a directory (or point $DSH_HOME elsewhere), then run again`)
    expect(readFileSync(h, 'utf8')).toBe('not a directory')
  })
})
