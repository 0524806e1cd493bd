import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { dsh, makeProfile, STACK, tempHome } from './launcher-helpers.js'

/**
 * Issue 13 "bad input": an out-of-tree plugin in a profile's node_modules that is missing or
 * broken stops the run with an error naming the row — whatever the build ships (transpiled
 * files or bundles), the in-tree rows are never a reason to hide which row failed.
 */
function brokenPackage(profileDir: string): void {
  const dir = join(profileDir, 'node_modules', 'dsh-plugin-bad')
  mkdirSync(dir, { recursive: true })
  const files: Record<string, string> = {
    'throws-on-import.js': 'throw new Error("boom at import")\n',
    'syntax.js': 'export const name = ;\n',
    'no-apply.js': 'export const name = "x"\n',
    'apply-throws.js': 'export const name = "t"\nexport function apply() { throw new Error("apply exploded") }\n',
  }
  const exports: Record<string, string> = {}
  for (const [file, text] of Object.entries(files)) {
    writeFileSync(join(dir, file), text)
    exports[`./${file.replace(/\.js$/, '')}`] = `./${file}`
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'dsh-plugin-bad', version: '1.0.0', type: 'module', exports }))
}

const HINT = '  hint: fix the rows named above, or mark a row you can do without `optional: true` in a patch file'

describe('a broken out-of-tree plugin', () => {
  it('one that throws at import, has a syntax error, exports no plugin or names a missing export: each row is named, nothing starts, exit 1', async () => {
    const { home, env } = tempHome()
    const dir = makeProfile(home, 'bad', [], [
      '- insert:',
      '    - {id: boom, name: dsh-plugin-bad/throws-on-import}',
      '    - {id: syntax, name: dsh-plugin-bad/syntax}',
      '    - {id: noapply, name: dsh-plugin-bad/no-apply}',
      '    - {id: gone, name: dsh-plugin-bad/gone}',
      '    - {id: settings, name: "@dsh/core/settings"}',
      '',
    ].join('\n'))
    brokenPackage(dir)
    const pkg = join(dir, 'node_modules', 'dsh-plugin-bad')
    const run = await dsh(['--profile', 'bad'], env)
    expect(run.code).toBe(1)
    expect(run.stderr).not.toMatch(STACK)
    expect(run.stderr.split('\n')).toEqual([
      `row boom (dsh-plugin-bad/throws-on-import): IMPORT_FAILED: cannot import ${join(pkg, 'throws-on-import.js')}: boom at import`,
      `row syntax (dsh-plugin-bad/syntax): IMPORT_FAILED: cannot import ${join(pkg, 'syntax.js')}: Unexpected token ';'`,
      `row noapply (dsh-plugin-bad/no-apply): PLUGIN_INVALID: ${join(pkg, 'no-apply.js')} exports no plugin (expected \`apply(ctx, config)\`, or a default export with one)`,
      `row gone (dsh-plugin-bad/gone): MODULE_NOT_FOUND: package dsh-plugin-bad (${pkg}) does not export "./gone"`,
      'BOOT_FAILED: rows boom, syntax, noapply, gone failed to load; nothing was started or changed',
      HINT,
      '',
    ])
  })

  it('one whose apply throws stops the run naming the row and mounts nothing after it', async () => {
    const { home, env } = tempHome()
    const dir = makeProfile(home, 'bad', [], '- insert:\n    - {id: exploder, name: dsh-plugin-bad/apply-throws}\n')
    brokenPackage(dir)
    const run = await dsh(['--profile', 'bad'], env)
    expect(run.code).toBe(1)
    expect(run.stderr).not.toMatch(STACK)
    expect(run.stderr.split('\n')).toEqual([
      'row exploder (dsh-plugin-bad/apply-throws): PLUGIN_FAILED: row exploder (dsh-plugin-bad/apply-throws) failed to start: apply exploded',
      'BOOT_FAILED: row exploder failed to load; the run stops (rows after the first failure were not mounted)',
      HINT,
      '',
    ])
  })
})
