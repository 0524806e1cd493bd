import { spawn } from 'node:child_process'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { DSH_BIN, dsh, makeProfile, STACK, tempHome } from './launcher-helpers.js'

const BASE_ROWS = ['sessions', 'session-store', 'settings', 'credentials', 'llm', 'llm-openai', 'llm-anthropic', 'retry', 'tools', 'prompt', 'permission', 'approval', 'agent', 'commands', 'presets', 'plan', 'titles', 'compaction', 'skills', 'subagents', 'fs', 'subprocess', 'shell', 'sandbox', 'worlds', 'tool-bash', 'tool-files', 'tool-search', 'tool-todo', 'mcp', 'host']

type Dump = { insert: { id: string; name: string; config?: unknown; disabled?: boolean }[] }[]

describe('dsh launcher', () => {
  it('--help and --version print and exit 0', async () => {
    const { env } = tempHome()
    const help = await dsh(['--help'], env)
    expect([help.code, help.stderr]).toEqual([0, ''])
    expect(help.stdout).toMatch(/^dsh — an agent harness/)
    for (const s of ['--profile NAME', '--patch FILE', '--dump-config', '--dump-default-config', 'dsh plugin --profile NAME add|remove|list', 'dsh login', 'dsh web']) expect(help.stdout).toContain(s)
    const version = await dsh(['--version'], env)
    expect(version).toEqual({ code: 0, signal: null, stdout: 'dsh 0.1.0\n', stderr: '' })
  })

  it('dsh sessions|plugin|login --help print that command\'s own usage, not the launcher\'s', async () => {
    const { env } = tempHome()
    for (const [cmd, first, mentions] of [
      ['sessions', 'usage: dsh sessions [--json] [--workspace DIR] [--profile NAME]', '--workspace DIR'],
      ['plugin', 'usage: dsh plugin --profile NAME add|remove|list [PKG...]', 'remove PKG...'],
      ['login', 'usage: dsh login [--provider NAME]', 'Providers: deepseek (default), openai, anthropic'],
    ] as const) {
      const run = await dsh([cmd, '--help'], env)
      expect([run.code, run.stderr, run.stdout.split('\n')[0]]).toEqual([0, '', first])
      expect(run.stdout).toContain(mentions)
      expect(run.stdout).not.toContain('Launcher options')
    }
  })

  it('run from a directory that was deleted, each command says so (CWD_GONE), not INTERNAL: ENOENT', async () => {
    const { home, env } = tempHome()
    const gone = join(home, 'gone')
    for (const args of [['sessions'], ['--profile', 'headless', 'task']]) {
      // the shell enters the directory, deletes it, then becomes dsh in it
      const run = await new Promise<{ code: number | null; stderr: string }>((done) => {
        const child = spawn('/bin/sh', ['-c', 'mkdir -p "$1" && cd "$1" && rmdir "$1" && shift && exec "$@"', 'sh', gone, process.execPath, DSH_BIN, ...args], { env })
        let stderr = ''
        child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
        child.on('close', (code) => done({ code, stderr }))
      })
      expect([run.code, run.stderr]).toEqual([1, 'CWD_GONE: the current directory no longer exists (it was deleted or moved)\n  hint: cd into an existing directory and run dsh again\n'])
    }
  })

  it('the default dump of the headless profile is YAML with the base and headless rows', async () => {
    const { home, env } = tempHome()
    const run = await dsh(['--profile', 'headless', '--dump-default-config'], env)
    expect(run.code).toBe(0)
    const dump = parse(run.stdout) as Dump
    expect(dump.length).toBe(1)
    expect(dump[0]!.insert.map((r) => r.id)).toEqual([...BASE_ROWS, 'headless'])
    expect(dump[0]!.insert.find((r) => r.id === 'headless')).toEqual({ id: 'headless', name: '@dsh/headless/runner', group: 'surface' })
    expect(run.stderr).toBe('')
    expect(JSON.parse(readFileSync(join(home, 'profiles/headless/package.json'), 'utf8'))).toEqual({
      name: 'dsh-profile-headless', private: true, dsh: { profile: { version: 1, bundles: ['@dsh/bundle-base', '@dsh/bundle-headless'] } },
    })
    // the same without a profile name: headless is the default
    const again = await dsh(['--dump-default-config'], env)
    expect([again.code, again.stdout, again.stderr]).toEqual([0, run.stdout, ''])
  })

  it('a home patch and a --patch overlay change the same row: the later wins and the dump names both files', async () => {
    const { home, env } = tempHome()
    const homePatch = join(home, 'cordis.patch.yml')
    writeFileSync(homePatch, '- id: llm\n  config: {provider: home, model: from-home}\n')
    const overlay = join(home, 'overlay.yml')
    writeFileSync(overlay, '- id: llm\n  config: {provider: overlay}\n- id: tool-search\n  disabled: true\n')
    const run = await dsh(['--profile', 'headless', '--patch', overlay, '--dump-config'], env)
    expect([run.code, run.stderr]).toEqual([0, ''])
    const rows = (parse(run.stdout) as Dump)[0]!.insert
    expect(rows.find((r) => r.id === 'llm')).toEqual({ id: 'llm', name: '@dsh/core/llm', group: 'llm', config: { provider: 'overlay' } })
    expect(rows.find((r) => r.id === 'tool-search')?.disabled).toBe(true)
    const lines = run.stdout.split('\n')
    const at = lines.findIndex((l) => l.trim() === '- id: llm')
    expect(lines.slice(at - 3, at).map((l) => l.trim())).toEqual([
      expect.stringMatching(/^# inserted by .*bundle-base\/cordis\.patch\.yml \(bundle @dsh\/bundle-base\)$/),
      `# changed by ${homePatch} (home): config`,
      `# changed by ${overlay} (--patch): config`,
    ])
    // without the overlay, the home patch wins over the bundle
    const homeOnly = (parse((await dsh(['--dump-config'], env)).stdout) as Dump)[0]!.insert
    expect(homeOnly.find((r) => r.id === 'llm')?.config).toEqual({ provider: 'home', model: 'from-home' })
  })

  it('dumps load no plugin', async () => {
    const { home, env } = tempHome()
    const marker = join(home, 'imported')
    writeFileSync(join(home, 'side-effect.mjs'), `import { writeFileSync } from 'node:fs'\nwriteFileSync(${JSON.stringify(marker)}, 'x')\nexport function apply() {}\n`)
    makeProfile(home, 'bare', [], '- insert:\n    - {id: fx, name: ../../side-effect.mjs}\n')
    const run = await dsh(['--profile', 'bare', '--dump-config'], env)
    expect((parse(run.stdout) as Dump)[0]!.insert).toEqual([{ id: 'fx', name: join(home, 'side-effect.mjs') }])
    expect(() => statSync(marker)).toThrow()
  })

  it('bad input fails with CODE: message naming file, row and key, a non-zero exit and no stack trace', async () => {
    const { home, env } = tempHome()
    const broken = join(home, 'broken.yml')
    writeFileSync(broken, '- id: llm\n  config: {model: x\n- id: agent\n')
    const noId = join(home, 'noid.yml')
    writeFileSync(noId, '- insert:\n    - name: "@dsh/core/llm"\n')
    const unknownId = join(home, 'unknown.yml')
    writeFileSync(unknownId, '- id: llm\n  disabled: true\n- id: nosuchrow\n  disabled: true\n')
    const runs = await Promise.all([
      dsh(['--patch', broken, '--dump-config'], env),
      dsh(['--patch', noId, '--dump-config'], env),
      dsh(['--patch', unknownId, '--dump-config'], env),
      dsh(['--patch', join(home, 'missing.yml'), '--dump-config'], env),
    ])
    // after the runs above created the headless template: the listing is then deterministic
    runs.push(await dsh(['--profile', 'nope', '--dump-config'], env), await dsh(['--profile'], env))
    for (const run of runs) expect(run.stderr).not.toMatch(STACK)
    expect(runs.map((r) => [r.code, r.stdout, r.stderr])).toEqual([
      [1, '', `PATCH_SYNTAX: ${broken}:3:1: Flow map in block collection must be sufficiently indented and end with a }\n  hint: fix the YAML syntax at that line\n`],
      [1, '', `PATCH_INVALID: ${noId}:2: row without an \`id\` (name "@dsh/core/llm")\n`],
      [1, '', `ROW_UNKNOWN: ${unknownId}:3: entry 2 replaces row "nosuchrow", but no earlier layer inserts a row with that id\n  hint: known ids: ${[...BASE_ROWS, 'headless'].join(', ')}; to add a row use \`- insert: [{id, name}]\`\n`],
      [1, '', `PATCH_NOT_FOUND: patch file ${join(home, 'missing.yml')} does not exist\n  hint: check the --patch path (relative paths are relative to the current directory)\n`],
      [1, '', `UNKNOWN_PROFILE: no profile named "nope" in ${join(home, 'profiles')}\n  hint: existing profiles: headless; templates: headless, acp, web, sdk\n`],
      [2, '', 'USAGE: --profile needs a profile name\n  hint: see dsh --help\n'],
    ])
  })

  it('a row naming an unknown package or failing its config schema stops the run: each is reported, nothing starts, exit 1', async () => {
    const { home, env } = tempHome()
    const dir = makeProfile(home, 'rows', [], [
      '- insert:',
      '    - {id: ghost, name: dsh-no-such-plugin/x}',
      '    - {id: settings, name: "@dsh/core/settings", config: {file: 42}}',
      '    - {id: credentials, name: "@dsh/core/credentials"}',
      '    - {id: permission, name: "@dsh/core/permission", config: {defualt: read-only}}',
      '',
    ].join('\n'))
    const report = join(home, 'tree.json')
    const run = await dsh(['--profile', 'rows'], { ...env, DSH_TREE_REPORT: report })
    expect(run.code).toBe(1)
    expect(run.stderr).not.toMatch(STACK)
    expect(run.stderr.split('\n')).toEqual([
      'row ghost (dsh-no-such-plugin/x): MODULE_NOT_FOUND: cannot find package dsh-no-such-plugin (hint: install it into the profile: dsh plugin --profile <name> add dsh-no-such-plugin)',
      `row settings (@dsh/core/settings): CONFIG_INVALID: row settings (@dsh/core/settings) set in ${join(dir, 'cordis.patch.yml')}: config.file: Invalid input: expected string, received number (hint: fix the config of row settings (replace it whole with \`- id: settings\` and \`config:\` in a patch file))`,
      // a misspelled key is named, never silently dropped
      `row permission (@dsh/core/permission): CONFIG_INVALID: row permission (@dsh/core/permission) set in ${join(dir, 'cordis.patch.yml')}: config.defualt: unknown key (did you mean "default"?); known keys: default, network (hint: fix the config of row permission (replace it whole with \`- id: permission\` and \`config:\` in a patch file))`,
      'BOOT_FAILED: rows ghost, settings, permission failed to load; nothing was started or changed',
      '  hint: fix the rows named above, or mark a row you can do without `optional: true` in a patch file',
      '',
    ])
    // nothing started: not even the good row
    const tree = JSON.parse(readFileSync(report, 'utf8')) as { ok: boolean; error: { code: string }; rows: unknown[]; services: string[] }
    expect([tree.ok, tree.error.code, tree.rows, tree.services.includes('credentials')]).toEqual([false, 'BOOT_FAILED', [], false])
  })

  it('the same rows marked optional are reported and the rest run', async () => {
    const { home, env } = tempHome()
    makeProfile(home, 'lenient', [], [
      '- insert:',
      '    - {id: ghost, name: dsh-no-such-plugin/x, optional: true}',
      '    - {id: credentials, name: "@dsh/core/credentials"}',
      '',
    ].join('\n'))
    const report = join(home, 'tree.json')
    const run = await dsh(['--profile', 'lenient'], { ...env, DSH_TREE_REPORT: report })
    expect(run.stderr.split('\n')[0]).toBe('optional row ghost (dsh-no-such-plugin/x): MODULE_NOT_FOUND: cannot find package dsh-no-such-plugin (hint: install it into the profile: dsh plugin --profile <name> add dsh-no-such-plugin)')
    expect(run.code).toBe(0)
    const tree = JSON.parse(readFileSync(report, 'utf8')) as { rows: { id: string; state: string }[] }
    expect(tree.rows.map((r) => [r.id, r.state])).toEqual([['ghost', 'failed'], ['credentials', 'active']])
  })

  it('a profile whose rows all start and that no surface holds exits 0', async () => {
    const { home, env } = tempHome()
    makeProfile(home, 'quiet', [], '- insert:\n    - {id: settings, name: "@dsh/core/settings"}\n')
    expect(await dsh(['--profile', 'quiet'], env)).toEqual({ code: 0, signal: null, stdout: '', stderr: '' })
  })

  it('dsh web with a bad flag names it and exits 2 without listening', async () => {
    const { env } = tempHome()
    const run = await dsh(['web', '--port', 'eighty'], env)
    expect(run.code).toBe(2)
    expect(run.stdout).toBe('')
    expect(run.stderr).toContain('USAGE: --port needs a number from 0 to 65535, got "eighty"')
    expect(run.stderr).not.toMatch(STACK)
  })

  it('dsh login stores the key from stdin in a 0600 file and never prints it', async () => {
    const { home, env } = tempHome()
    const first = await dsh(['login'], env, { input: 'sk-e2e-one\n' })
    const second = await dsh(['login', '--provider', 'openai'], env, { input: 'sk-e2e-two' })
    const file = join(home, '.credentials.yaml')
    expect([first.code, first.stdout, first.stderr]).toEqual([0, '', `stored the deepseek key in ${file}\n`])
    expect([second.code, second.stdout, second.stderr]).toEqual([0, '', `stored the openai key in ${file}\n`])
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(parse(readFileSync(file, 'utf8'))).toEqual({ version: 1, providers: { deepseek: { apiKey: 'sk-e2e-one' }, openai: { apiKey: 'sk-e2e-two' } } })
    const nosuch = await dsh(['login', '--provider', 'nosuch'], env, { input: 'sk-e2e-three' })
    expect([nosuch.code, nosuch.stdout, nosuch.stderr]).toEqual([1, '', 'UNKNOWN_PROVIDER: unknown provider "nosuch"\n  hint: known providers: deepseek, openai, anthropic\n'])
    expect(readFileSync(file, 'utf8')).not.toContain('nosuch')
    const empty = await dsh(['login'], env, { input: '' })
    expect([empty.code, empty.stderr]).toEqual([1, 'LOGIN_EMPTY: no key given\n  hint: type the key, or pipe it: printf %s "$KEY" | dsh login\n'])
  })
})
