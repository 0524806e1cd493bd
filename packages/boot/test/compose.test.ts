import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { isDshError } from '@dsh/protocol'
import { compose, dumpComposition, parsePatch, redactSecrets, rowFiles, type PatchSource } from '../src/index.js'

const base: PatchSource = {
  file: '/b/base.yml',
  label: 'bundle base',
  text: `
- insert:
    - id: a
      name: '@x/a'
      config: {k: 1, nested: {deep: true}}
    - id: b
      name: ./b.js
      group: g
`,
}

function failure(fn: () => unknown): { code: string; message: string; data: unknown } {
  try {
    fn()
  } catch (error) {
    if (!isDshError(error)) throw error
    return { code: error.code, message: error.message, data: error.data }
  }
  throw new Error('expected a DshError')
}

describe('compose', () => {
  it('applies layers in order: insert appends, replacement sets named keys wholesale', () => {
    const profile: PatchSource = { file: '/p/profile.yml', text: '- id: a\n  config: {k: 2}\n- insert:\n    - {id: c, name: "@x/c"}\n' }
    const home: PatchSource = { file: '/h/home.yml', text: '- id: b\n  disabled: true\n- id: a\n  name: ./a2.js\n' }
    const overlay: PatchSource = { file: '/o/over.yml', text: '- id: a\n  config: {k: 3}\n- id: b\n  group: null\n' }
    const result = compose([base, profile, home, overlay])
    expect(result).toEqual({
      rows: [
        {
          row: { id: 'a', name: './a2.js', config: { k: 3 } },
          insertedBy: '/b/base.yml',
          changes: [{ file: '/p/profile.yml', keys: ['config'] }, { file: '/h/home.yml', keys: ['name'] }, { file: '/o/over.yml', keys: ['config'] }],
          nameFrom: '/h/home.yml',
        },
        { row: { id: 'b', name: './b.js', disabled: true }, insertedBy: '/b/base.yml', changes: [{ file: '/h/home.yml', keys: ['disabled'] }, { file: '/o/over.yml', keys: ['group'] }], nameFrom: '/b/base.yml' },
        { row: { id: 'c', name: '@x/c' }, insertedBy: '/p/profile.yml', changes: [], nameFrom: '/p/profile.yml' },
      ],
      layers: [{ file: '/b/base.yml', label: 'bundle base' }, { file: '/p/profile.yml' }, { file: '/h/home.yml' }, { file: '/o/over.yml' }],
    })
    expect(rowFiles(result.rows[0]!)).toEqual(['/b/base.yml', '/p/profile.yml', '/h/home.yml', '/o/over.yml'])
  })

  it('does not mutate the parsed input when later layers replace config', () => {
    const entries = parsePatch(base)
    compose([base, { file: '/o.yml', text: '- id: a\n  config: {k: 9}\n' }])
    expect(entries[0]).toMatchObject({ type: 'insert', rows: [{ row: { config: { k: 1, nested: { deep: true } } } }, { row: { id: 'b' } }] })
  })

  it('an empty or comment-only file contributes nothing', () => {
    expect(compose([{ file: '/e.yml', text: '# nothing here\n' }, base]).rows.map((r) => r.row.id)).toEqual(['a', 'b'])
  })

  it('a duplicate insert names both files', () => {
    expect(failure(() => compose([base, { file: '/p/dup.yml', text: '- insert:\n  - id: a\n    name: "@y/a"\n' }]))).toEqual({
      code: 'ROW_DUPLICATE',
      message: '/p/dup.yml:2: row "a" is already inserted by /b/base.yml',
      data: { file: '/p/dup.yml', line: 2, row: 'a', other: '/b/base.yml' },
    })
  })

  it('replacing an unknown id names the file, the entry and the id', () => {
    expect(failure(() => compose([base, { file: '/p/x.yml', text: '- id: a\n  disabled: false\n- id: zz\n  config: {}\n' }]))).toEqual({
      code: 'ROW_UNKNOWN',
      message: '/p/x.yml:3: entry 2 replaces row "zz", but no earlier layer inserts a row with that id',
      data: { file: '/p/x.yml', line: 3, index: 1, row: 'zz' },
    })
  })
})

describe('parsePatch errors', () => {
  const cases: [string, string, string, string][] = [
    ['syntax error with line', '- insert:\n  - id: a\n    name: [\n', 'PATCH_SYNTAX', '/f.yml:4:1: Flow sequence in block collection must be sufficiently indented and end with a ]'],
    ['duplicate key', '- id: a\n  config: 1\n  config: 2\n', 'PATCH_SYNTAX', '/f.yml:3:3: Map keys must be unique'],
    ['not a list', 'id: a\n', 'PATCH_INVALID', '/f.yml:1: a patch file must be a YAML list of `- insert: [...]` and `- id: ...` entries'],
    ['row without id', '- insert:\n    - name: "@x/y"\n', 'PATCH_INVALID', '/f.yml:2: row without an `id` (name "@x/y")'],
    ['row without name', '- insert:\n    - id: q\n', 'PATCH_INVALID', '/f.yml:2: row "q": `name` must be a module name (e.g. @dsh/core/tools)'],
    ['unknown row key', '- insert:\n    - {id: q, name: x, confg: {}}\n', 'PATCH_INVALID', '/f.yml:2: row "q": unknown key "confg" (a row has id, name, config, disabled, group, optional)'],
    ['bad disabled', '- insert:\n    - {id: q, name: x, disabled: "yes"}\n', 'PATCH_INVALID', '/f.yml:2: row "q": `disabled` must be true or false'],
    ['id with no key', '- id: q\n', 'PATCH_INVALID', '/f.yml:1: entry 1: `- id: q` names no key to replace (give name, config, disabled, group or optional)'],
    ['unknown replacement key', '- id: q\n  conf: {}\n', 'PATCH_INVALID', '/f.yml:1: row "q": unknown key "conf" (a replacement may set name, config, disabled, group, optional)'],
    ['entry without insert or id', '- foo: 1\n', 'PATCH_INVALID', '/f.yml:1: entry 1 must have `insert` or `id` (found "foo")'],
    ['insert with another key', '- insert: []\n  id: x\n', 'PATCH_INVALID', '/f.yml:1: entry 1: an `insert` entry takes no other key (found "id")'],
    ['insert not a list', '- insert: {id: x}\n', 'PATCH_INVALID', '/f.yml:1: entry 1: `insert` must be a list of rows'],
  ]
  it.each(cases)('%s', (_what, text, code, message) => {
    const error = failure(() => parsePatch({ file: '/f.yml', text }))
    expect({ code: error.code, message: error.message }).toEqual({ code, message })
  })

  it('a syntax error never echoes the source line', () => {
    const error = failure(() => parsePatch({ file: '/f.yml', text: '- id: a\n  config: {apiKey: sk-SECRET: x}\n' }))
    expect(error.code).toBe('PATCH_SYNTAX')
    expect(error.message).not.toContain('SECRET')
    expect(error.message).toMatch(/^\/f\.yml:2:\d+: /)
  })
})

describe('dumpComposition', () => {
  const overlay: PatchSource = { file: '/o/over.yml', label: '--patch', text: '- id: a\n  config: {apiKey: sk-123, k: 5}\n' }
  const composition = compose([base, overlay])
  const text = dumpComposition(composition, ['title'])

  it('is one loadable patch file with every effective row (relative names made absolute, secrets redacted)', () => {
    expect(parse(text)).toEqual([{ insert: [
      { id: 'a', name: '@x/a', config: { apiKey: '<redacted>', k: 5 } },
      { id: 'b', name: '/b/b.js', group: 'g' },
    ] }])
    expect(compose([{ file: '/dump.yml', text }]).rows.map((r) => r.row)).toEqual([
      { id: 'a', name: '@x/a', config: { apiKey: '<redacted>', k: 5 } },
      { id: 'b', name: '/b/b.js', group: 'g' },
    ])
    expect(text).not.toContain('sk-123')
  })

  it('annotates each row with the files that inserted and changed it', () => {
    expect(text.split('\n').filter((l) => l.trim().startsWith('#'))).toEqual([
      '# title',
      '# layers, in order (later wins):',
      '#   1. /b/base.yml (bundle base)',
      '#   2. /o/over.yml (--patch)',
      '    # inserted by /b/base.yml (bundle base)',
      '    # changed by /o/over.yml (--patch): config',
      '    # inserted by /b/base.yml (bundle base)',
    ])
  })

  it('redacts secret-looking keys at any depth', () => {
    expect(redactSecrets({ a: [{ token: 't', x: 1 }], password: 'p', maxTokens: 5, nested: { api_key: 'k' } }))
      .toEqual({ a: [{ token: '<redacted>', x: 1 }], password: '<redacted>', maxTokens: 5, nested: { api_key: '<redacted>' } })
  })
})
