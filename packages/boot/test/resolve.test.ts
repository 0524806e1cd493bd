import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { isDshError } from '@dsh/protocol'
import { matchExports, resolveMemo, resolveModule, splitSpecifier } from '../src/index.js'

function tree(files: Record<string, string>): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-resolve-')))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

const pkg = (o: object) => JSON.stringify(o)

describe('resolveModule', () => {
  const root = tree({
    'app/node_modules/@s/lib/package.json': pkg({ name: '@s/lib', exports: { '.': { import: './dist/index.js', require: './cjs.js' }, './*': { 'dsh-source': './src/plugins/*.ts', default: './dist/plugins/*.js' }, './fixed': './fixed.js', './hidden/*': null } }),
    'app/node_modules/@s/lib/dist/index.js': '',
    'app/node_modules/@s/lib/dist/plugins/tools.js': '',
    'app/node_modules/@s/lib/src/plugins/tools.ts': '',
    'app/node_modules/@s/lib/fixed.js': '',
    'app/node_modules/plain/package.json': pkg({ name: 'plain', main: 'main.js' }),
    'app/node_modules/plain/main.js': '',
    'app/node_modules/plain/sub/x.js': '',
    'app/deep/er/.keep': '',
    'dsh/node_modules/only-in-dsh/package.json': pkg({ name: 'only-in-dsh', exports: './e.js' }),
    'dsh/node_modules/only-in-dsh/e.js': '',
    'profile/node_modules/plain/package.json': pkg({ name: 'plain', main: 'profile.js' }),
    'profile/node_modules/plain/profile.js': '',
    'patches/rel/plugin.js': '',
  })
  const r = (spec: string, dirs: string[], extra: { base?: string; conditions?: string[] } = {}) => resolveModule(spec, { searchDirs: dirs.map((d) => join(root, d)), ...extra })

  it('maps package subpaths through exports (conditions, * patterns, exact keys)', () => {
    expect(r('@s/lib', ['app/deep/er'])).toBe(join(root, 'app/node_modules/@s/lib/dist/index.js'))
    expect(r('@s/lib/tools', ['app'])).toBe(join(root, 'app/node_modules/@s/lib/dist/plugins/tools.js'))
    expect(r('@s/lib/tools', ['app'], { conditions: ['dsh-source', 'import'] })).toBe(join(root, 'app/node_modules/@s/lib/src/plugins/tools.ts'))
    expect(r('@s/lib/fixed', ['app'])).toBe(join(root, 'app/node_modules/@s/lib/fixed.js'))
  })

  it('falls back to main and file paths without exports', () => {
    expect(r('plain', ['app'])).toBe(join(root, 'app/node_modules/plain/main.js'))
    expect(r('plain/sub/x', ['app'])).toBe(join(root, 'app/node_modules/plain/sub/x.js'))
  })

  it('searches directories in order: the profile first, then dsh', () => {
    expect(r('plain', ['profile', 'app'])).toBe(join(root, 'profile/node_modules/plain/profile.js'))
    expect(r('only-in-dsh', ['profile', 'dsh'])).toBe(join(root, 'dsh/node_modules/only-in-dsh/e.js'))
  })

  it('resolves a relative name against the file that introduced it', () => {
    expect(r('./rel/plugin.js', [], { base: join(root, 'patches/cordis.patch.yml') })).toBe(join(root, 'patches/rel/plugin.js'))
  })

  it('returns the real path of a symlinked package', () => {
    symlinkSync(join(root, 'app/node_modules/plain'), join(root, 'profile/node_modules/linked'))
    expect(r('linked/sub/x.js', ['profile'])).toBe(join(root, 'app/node_modules/plain/sub/x.js'))
  })

  it('fails with MODULE_NOT_FOUND and a hint', () => {
    const codes = ['nope', '@dsh/web/server', '@s/lib/hidden/x', '@s/lib/missing', './nothere.js'].map((spec) => {
      try {
        r(spec, ['app'], { base: join(root, 'patches/p.yml') })
        return 'resolved'
      } catch (error) {
        return isDshError(error) ? `${error.code}: ${error.message}${error.hint ? ` | ${error.hint}` : ''}` : String(error)
      }
    })
    expect(codes).toEqual([
      'MODULE_NOT_FOUND: cannot find package nope | install it into the profile: dsh plugin --profile <name> add nope',
      'MODULE_NOT_FOUND: cannot find package @dsh/web | @dsh/web is not part of this build of dsh',
      `MODULE_NOT_FOUND: package @s/lib (${join(root, 'app/node_modules/@s/lib')}) does not export "./hidden/x"`,
      `MODULE_NOT_FOUND: cannot find module @s/lib/missing: ${join(root, 'app/node_modules/@s/lib/dist/plugins/missing.js')} does not exist`,
      `MODULE_NOT_FOUND: cannot find module ./nothere.js (relative to ${join(root, 'patches/p.yml')}): ${join(root, 'patches/nothere.js')} does not exist`,
    ])
  })
})

describe('resolveModule with a memo (one per composition: 0095)', () => {
  it('finds a package and reads its manifest once per memo; a new memo sees the disk again (a reload)', () => {
    const root = tree({
      'p/node_modules/m/package.json': pkg({ name: 'm', exports: { './a': './a.js', './b': './b.js' } }),
      'p/node_modules/m/a.js': '', 'p/node_modules/m/b.js': '', 'p/node_modules/m/a2.js': '',
    })
    const memo = resolveMemo()
    const r = (spec: string, m = memo) => resolveModule(spec, { searchDirs: [join(root, 'p')], memo: m })
    expect([r('m/a'), r('m/b')]).toEqual([join(root, 'p/node_modules/m/a.js'), join(root, 'p/node_modules/m/b.js')])
    expect([...memo.manifests.keys()]).toEqual([join(root, 'p/node_modules/m')])
    expect(memo.dirs.size).toBe(1)
    writeFileSync(join(root, 'p/node_modules/m/package.json'), pkg({ name: 'm', exports: { './a': './a2.js' } }))
    expect(r('m/a')).toBe(join(root, 'p/node_modules/m/a.js')) // the same composition: the manifest it read
    expect(r('m/a', resolveMemo())).toBe(join(root, 'p/node_modules/m/a2.js'))
    expect(() => r('m/b', resolveMemo())).toThrow(/does not export/)
  })
})

describe('exports helpers', () => {
  it('splits scoped and bare specifiers', () => {
    expect([splitSpecifier('@a/b'), splitSpecifier('@a/b/c/d'), splitSpecifier('x'), splitSpecifier('x/y')]).toEqual([
      { pkg: '@a/b', subpath: '.' }, { pkg: '@a/b', subpath: './c/d' }, { pkg: 'x', subpath: '.' }, { pkg: 'x', subpath: './y' },
    ])
  })

  it('prefers the longest pattern prefix and honours array fallbacks', () => {
    const c = new Set(['import', 'default'])
    const exp = { './*': './all/*.js', './plugins/*': './p/*.js', './arr': [{ require: './r.js' }, './a.js'] }
    expect([matchExports(exp, './plugins/x', c), matchExports(exp, './y', c), matchExports(exp, './arr', c), matchExports('./main.js', '.', c)])
      .toEqual(['./p/x.js', './all/y.js', './a.js', './main.js'])
  })
})
