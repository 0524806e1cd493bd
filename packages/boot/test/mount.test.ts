import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { DshError } from '@dsh/protocol'
import { compose, Launcher, Mounter, snapshotTree, type PatchSource } from '../src/index.js'

/** Plugin files written to a temp dir; rows name them relatively from a patch file there. */
function world(): { dir: string; patch: (text: string, name?: string) => PatchSource } {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-mount-'))
  const files: Record<string, string> = {
    'hello.mjs': `export const name = 'hello'
export function apply(ctx, config) {
  ctx.provide('hello', { greet: () => 'hi ' + config.who })
  ctx.on('ping', () => {})
  ctx.effect(() => { const t = setInterval(() => {}, 1000); return () => clearInterval(t) }, 'hello timer')
}`,
    'needs-hello.mjs': `export const inject = ['hello']
export function apply(ctx) { ctx.provide('polite', { say: () => ctx.hello.greet() + '!' }) }`,
    'needs-ghost.mjs': `export const inject = ['ghost', 'hello']
export function apply() {}`,
    'throws.mjs': `export function apply() { throw new Error('boom in apply') }`,
    'broken.mjs': `export function apply( {`,
    'no-apply.mjs': `export const name = 'nothing'`,
    'default-export.mjs': `export default { name: 'dflt', apply(ctx) { ctx.provide('dflt', 1) } }`,
    'returns-disposer.mjs': `export function apply(ctx, config) { globalThis[config.key] = 'up'; return () => { globalThis[config.key] = 'down' } }`,
    'schema.mjs': `export const Config = { '~standard': { version: 1, vendor: 'test', validate(v) {
  return typeof v.port === 'number' ? { value: v } : { issues: [{ message: 'expected a number', path: ['port'] }] } } } }
export function apply(ctx) { ctx.provide('served', true) }`,
  }
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return { dir, patch: (text, name = 'cordis.patch.yml') => ({ file: join(dir, name), text }) }
}

const zodPlugin = fileURLToPath(new URL('./fixtures/zod-plugin.ts', import.meta.url))

describe('Mounter', () => {
  it('a row that cannot load stops the apply before anything mounts; BOOT_FAILED names each such row', async () => {
    const w = world()
    const rows = compose([w.patch(`
- insert:
    - {id: hello, name: ./hello.mjs, config: {who: you}}
    - {id: missing, name: '@nowhere/pkg/x'}
    - {id: broken, name: ./broken.mjs}
    - {id: empty, name: ./no-apply.mjs}
    - {id: schema, name: ./schema.mjs, config: {port: "80"}}
    - {id: typo, name: '${zodPlugin}', config: {limits: {max: 3}, lable: y}}
    - {id: late, name: ./default-export.mjs}
`)]).rows
    const root = new Context()
    const mounter = new Mounter({ root, searchDirs: [w.dir] })
    const error = await mounter.apply(rows).catch((e: unknown) => e) as DshError
    expect(error).toBeInstanceOf(DshError)
    expect(error.code).toBe('BOOT_FAILED')
    expect(error.message).toBe('rows missing, broken, empty, schema, typo failed to load; nothing was started or changed')
    const failed = (error.data as { rows: { id: string; reason: string }[] }).rows
    expect(failed.map((r) => [r.id, r.reason.split(':')[0]])).toEqual([
      ['missing', 'MODULE_NOT_FOUND'], ['broken', 'IMPORT_FAILED'], ['empty', 'PLUGIN_INVALID'], ['schema', 'CONFIG_INVALID'], ['typo', 'CONFIG_INVALID'],
    ])
    expect(failed[4]!.reason).toContain('config.lable: unknown key (did you mean "label"?)')
    // nothing ran: the good rows before and after the bad ones were not mounted
    expect(root.get('hello', false)).toBeUndefined()
    expect(root.get('dflt', false)).toBeUndefined()
    expect(mounter.statuses()).toEqual([])
    // marked optional, the same bad rows are reported and the good ones run
    const lenient = rows.map((r) => (r.row.id === 'hello' || r.row.id === 'late' ? r : { ...r, row: { ...r.row, optional: true } }))
    await mounter.apply(lenient)
    expect(mounter.statuses().map((s) => [s.id, s.state])).toEqual([
      ['hello', 'active'], ['missing', 'failed'], ['broken', 'failed'], ['empty', 'failed'], ['schema', 'failed'], ['typo', 'failed'], ['late', 'active'],
    ])
    await mounter.dispose()
  })

  it('a reload with a row that cannot load changes nothing: the running rows stay mounted', async () => {
    const w = world()
    const bundle = w.patch('- insert:\n    - {id: hello, name: ./hello.mjs, config: {who: a}}\n    - {id: dflt, name: ./default-export.mjs}\n', 'bundle.yml')
    const root = new Context()
    const mounter = new Mounter({ root, searchDirs: [w.dir] })
    await mounter.apply(compose([bundle]).rows)
    const hello = mounter.fiber('hello')
    const edit = w.patch(`- id: hello\n  config: {who: b}\n- id: dflt\n  name: '${zodPlugin}'\n  config: {limits: {max: "x"}}\n`)
    await expect(mounter.apply(compose([bundle, edit]).rows)).rejects.toMatchObject({ code: 'BOOT_FAILED', message: 'row dflt failed to load; nothing was started or changed' })
    expect(mounter.fiber('hello')).toBe(hello)
    expect((root.get('hello') as { greet(): string }).greet()).toBe('hi a')
    expect(mounter.statuses().map((s) => [s.id, s.state])).toEqual([['hello', 'active'], ['dflt', 'active']])
    await mounter.dispose()
  })

  it('a row whose apply throws stops the rows after it; the apply fails with BOOT_FAILED', async () => {
    const w = world()
    const rows = compose([w.patch('- insert:\n    - {id: hello, name: ./hello.mjs, config: {who: a}}\n    - {id: throws, name: ./throws.mjs}\n    - {id: dflt, name: ./default-export.mjs}\n')]).rows
    const root = new Context()
    const mounter = new Mounter({ root, searchDirs: [w.dir] })
    await expect(mounter.apply(rows)).rejects.toMatchObject({ code: 'BOOT_FAILED', message: 'row throws failed to load; the run stops (rows after the first failure were not mounted)' })
    expect(root.get('dflt', false)).toBeUndefined()
    expect(mounter.statuses().map((s) => [s.id, s.state])).toEqual([['hello', 'active'], ['throws', 'failed']])
    await mounter.dispose()
  })

  it('rows marked optional fail alone: each is reported with its reason and the rest keep running', async () => {
    const w = world()
    const rows = compose([w.patch(`
- insert:
    - {id: hello, name: ./hello.mjs, config: {who: you}}
    - {id: polite, name: ./needs-hello.mjs}
    - {id: ghost, name: ./needs-ghost.mjs}
    - {id: missing, name: '@nowhere/pkg/x', optional: true}
    - {id: throws, name: ./throws.mjs, optional: true}
    - {id: broken, name: ./broken.mjs, optional: true}
    - {id: empty, name: ./no-apply.mjs, optional: true}
    - {id: dflt, name: ./default-export.mjs}
    - {id: schema, name: ./schema.mjs, config: {port: "80"}, optional: true}
    - {id: zod, name: '${zodPlugin}', config: {limits: {max: "3"}}, optional: true}
    - {id: off, name: ./throws.mjs, disabled: true}
`)]).rows
    const root = new Context()
    const mounter = new Mounter({ root, searchDirs: [w.dir] })
    expect(await mounter.apply(rows)).toEqual({ added: ['hello', 'polite', 'ghost', 'missing', 'throws', 'broken', 'empty', 'dflt', 'schema', 'zod'], removed: [], remounted: [] })
    const file = join(w.dir, 'cordis.patch.yml')
    const statuses = mounter.statuses().map(({ files, ...s }) => { expect(files).toEqual([file]); return s })
    expect(statuses).toEqual([
      { id: 'hello', name: './hello.mjs', state: 'active' },
      { id: 'polite', name: './needs-hello.mjs', state: 'active' },
      { id: 'ghost', name: './needs-ghost.mjs', state: 'pending', waitingFor: ['ghost'] },
      { id: 'missing', name: '@nowhere/pkg/x', optional: true, state: 'failed', reason: 'MODULE_NOT_FOUND: cannot find package @nowhere/pkg (hint: install it into the profile: dsh plugin --profile <name> add @nowhere/pkg)' },
      { id: 'throws', name: './throws.mjs', optional: true, state: 'failed', reason: 'PLUGIN_FAILED: row throws (./throws.mjs) failed to start: boom in apply' },
      { id: 'broken', name: './broken.mjs', optional: true, state: 'failed', reason: expect.stringMatching(/^IMPORT_FAILED: cannot import .*broken\.mjs: /) },
      { id: 'empty', name: './no-apply.mjs', optional: true, state: 'failed', reason: `PLUGIN_INVALID: ${join(w.dir, 'no-apply.mjs')} exports no plugin (expected \`apply(ctx, config)\`, or a default export with one)` },
      { id: 'dflt', name: './default-export.mjs', state: 'active' },
      { id: 'schema', name: './schema.mjs', optional: true, state: 'failed', reason: `CONFIG_INVALID: row schema (./schema.mjs) set in ${file}: config.port: expected a number (hint: fix the config of row schema (replace it whole with \`- id: schema\` and \`config:\` in a patch file))` },
      { id: 'zod', name: zodPlugin, optional: true, state: 'failed', reason: expect.stringContaining(`CONFIG_INVALID: row zod (${zodPlugin}) set in ${file}: config.limits.max: Invalid input: expected number, received string`) },
      { id: 'off', name: './throws.mjs', state: 'disabled' },
    ])
    expect(mounter.healthy()).toBe(false) // ghost is pending
    expect((root.get('polite') as { say(): string }).say()).toBe('hi you!')
    await mounter.dispose()
    expect(root.get('hello', false)).toBeUndefined()
  })

  it('applies a new composition as a difference and unwinds what it removes', async () => {
    const w = world()
    const root = new Context()
    const mounter = new Mounter({ root, searchDirs: [w.dir] })
    const bundle = w.patch('- insert:\n    - {id: hello, name: ./hello.mjs, config: {who: a}}\n    - {id: polite, name: ./needs-hello.mjs}\n    - {id: dflt, name: ./default-export.mjs}\n', 'bundle.yml')
    await mounter.apply(compose([bundle]).rows)
    const polite = mounter.fiber('polite')
    const first = snapshotTree(root, mounter)
    expect(first.rows.map(({ files: _f, ...r }) => r)).toEqual([
      { id: 'hello', name: './hello.mjs', state: 'active', provides: ['hello'], listeners: { ping: 1 },
        effects: [{ label: 'ctx.provide("hello")' }, { label: 'ctx.on("ping")' }, { label: 'hello timer' }] },
      { id: 'polite', name: './needs-hello.mjs', state: 'active', provides: ['polite'], listeners: {}, effects: [{ label: 'ctx.provide("polite")' }] },
      { id: 'dflt', name: './default-export.mjs', state: 'active', provides: ['dflt'], listeners: {}, effects: [{ label: 'ctx.provide("dflt")' }] },
    ])
    expect(first.services).toEqual(['dflt', 'hello', 'polite'])
    expect(first.listeners).toEqual({ ping: 1 })

    // same rows: nothing is touched
    expect(await mounter.apply(compose([bundle]).rows)).toEqual({ added: [], removed: [], remounted: [] })
    expect(mounter.fiber('polite')).toBe(polite)

    // disable hello: it unwinds and its dependant goes pending; dflt changes config: re-mounted
    const edit = w.patch('- id: hello\n  disabled: true\n- id: dflt\n  config: {x: 1}\n')
    expect(await mounter.apply(compose([bundle, edit]).rows)).toEqual({ added: [], removed: ['hello'], remounted: ['dflt'] })
    const second = snapshotTree(root, mounter)
    expect(second.services).toEqual(['dflt'])
    expect(second.listeners).toEqual({})
    expect(second.rows.map((r) => [r.id, r.state, r.waitingFor ?? [], r.effects])).toEqual([
      ['hello', 'disabled', [], []], ['polite', 'pending', ['hello'], []], ['dflt', 'active', [], [{ label: 'ctx.provide("dflt")' }]],
    ])

    // re-enable and remove dflt
    const third = w.patch('- id: hello\n  disabled: false\n- id: dflt\n  disabled: true\n', 'third.yml')
    expect(await mounter.apply(compose([bundle, third]).rows)).toEqual({ added: ['hello'], removed: ['dflt'], remounted: [] })
    expect(snapshotTree(root, mounter).services).toEqual(['hello', 'polite'])
    expect(mounter.fiber('polite')).toBe(polite)
    expect(mounter.healthy()).toBe(true)
  })

  it('runs a disposer returned by a module-level `function apply` when the row goes', async () => {
    const w = world()
    const root = new Context()
    const mounter = new Mounter({ root, searchDirs: [w.dir] })
    const rows = w.patch('- insert:\n    - {id: r, name: ./returns-disposer.mjs, config: {key: dshTestFlag}}\n', 'bundle.yml')
    await mounter.apply(compose([rows]).rows)
    const flags = globalThis as { dshTestFlag?: string }
    expect(flags.dshTestFlag).toBe('up')
    await mounter.apply(compose([rows, w.patch('- id: r\n  disabled: true\n')]).rows)
    expect(flags.dshTestFlag).toBe('down')
  })
})

describe('Launcher', () => {
  const init = { argv: ['task'], home: '/h', profile: 'p', cwd: '/c', env: {}, version: '0', stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }

  it('a hold is released by its function or by unloading the plugin that took it', async () => {
    const root = new Context()
    const launcher = new Launcher(root, init)
    const idle: number[] = []
    launcher.onIdle(() => idle.push(launcher.holds))
    let release: (() => void) | undefined
    const fiber = await root.plugin({ name: 'surface', inject: ['launcher'], apply: (ctx: Context) => { release = ctx.launcher.hold(); ctx.launcher.hold() } })
    expect(launcher.holds).toBe(2)
    release!()
    release!()
    expect([launcher.holds, idle]).toEqual([1, []])
    await fiber.dispose()
    expect([launcher.holds, idle]).toEqual([0, [0]])
    expect((root.get('launcher') as Launcher).argv).toEqual(['task'])
  })

  it('takes stdin as a function called on first use, once, also through the service (0095)', async () => {
    const root = new Context()
    let calls = 0
    const stream = new PassThrough()
    new Launcher(root, { ...init, stdin: () => { calls++; return stream } })
    expect(calls).toBe(0)
    const seen: unknown[] = []
    await root.plugin({ name: 'surface', inject: ['launcher'], apply: (ctx: Context) => { seen.push(ctx.launcher.stdin, ctx.launcher.stdin) } })
    expect(seen).toEqual([stream, stream])
    expect(calls).toBe(1)
  })

  it('the first exit code wins', async () => {
    const launcher = new Launcher(new Context(), init)
    launcher.exit(3)
    launcher.exit(0)
    expect([await launcher.exited, launcher.exitCode]).toEqual([3, 3])
  })
})
