import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { dsh, makeProfile, start, STACK, tempHome } from './launcher-helpers.js'

interface Tree {
  generation: number
  event: string
  ok: boolean
  error?: { code: string; message: string }
  rows: { id: string; state: string; provides: string[]; effects: { label: string }[]; listeners: Record<string, number> }[]
  services: string[]
  listeners: Record<string, number>
}

/** An out-of-tree bundle package: one row whose plugin provides a service, listens, runs a timer and holds the process. */
function writePluginPackage(dir: string): void {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({
    name: 'dsh-plugin-hello', version: '1.0.0', type: 'module',
    exports: { './plugin': './plugin.js', './package.json': './package.json' },
    dsh: { bundle: { patch: './cordis.patch.yml' } },
  }))
  writeFileSync(join(dir, 'cordis.patch.yml'), '- insert:\n    - id: hello\n      name: dsh-plugin-hello/plugin\n      config: {greeting: hi}\n')
  writeFileSync(join(dir, 'plugin.js'), `
export const name = 'hello'
export const inject = ['launcher']
import { writeFileSync } from 'node:fs'
export function apply(ctx, config) {
  const { argv, profile, home, cwd, version } = ctx.launcher
  if (config.seen) writeFileSync(config.seen, JSON.stringify({ argv, profile, home, cwd, version }))
  ctx.provide('hello', { greet: () => config.greeting })
  ctx.on('launcher/signal', (signal) => ctx.launcher.exit(signal === 'SIGTERM' ? 7 : 8))
  ctx.effect(() => { const t = setInterval(() => {}, 60000); return () => clearInterval(t) }, 'hello interval')
  ctx.launcher.hold()
}
`)
}

function readTree(file: string): Tree | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Tree) : undefined
}

async function treeAt(file: string, generation: number): Promise<Tree> {
  let tree: Tree | undefined
  await vi.waitFor(() => { tree = readTree(file); expect(tree?.generation).toBe(generation) }, { timeout: 10_000, interval: 50 })
  return tree!
}

describe('an out-of-tree plugin', () => {
  it('is added with dsh plugin add, boots, and disabling its row by patch unwinds every registration', async () => {
    const { home, env } = tempHome()
    const pkg = join(home, '..', 'dsh-plugin-hello')
    writePluginPackage(pkg)
    const profileDir = makeProfile(home, 't', [])

    const add = await dsh(['plugin', '--profile', 't', 'add', pkg], env)
    expect([add.code, add.stdout]).toEqual([0, 'added bundle dsh-plugin-hello to profile t\n'])
    const manifest = JSON.parse(readFileSync(join(profileDir, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; dsh: unknown }
    expect(Object.keys(manifest.dependencies)).toEqual(['dsh-plugin-hello'])
    expect(manifest.dsh).toEqual({ profile: { version: 1, bundles: ['dsh-plugin-hello'] } })
    const again = await dsh(['plugin', '--profile', 't', 'add', pkg], env)
    expect([again.code, again.stdout]).toEqual([0, 'dsh-plugin-hello is already a bundle of profile t\n'])
    const list = await dsh(['plugin', '--profile', 't', 'list'], env)
    expect(list.stdout).toBe(`profile t (${profileDir})\nbundles, in layer order:\n  dsh-plugin-hello (profile)\ninstalled packages: \n  dsh-plugin-hello (bundle)\n`)

    const report = join(home, 'tree.json')
    const app = start(['--profile', 't'], { ...env, DSH_TREE_REPORT: report })
    const booted = await treeAt(report, 1)
    expect(booted).toEqual({
      generation: 1, event: 'boot', ok: true, profile: 't',
      rows: [{
        id: 'hello', name: 'dsh-plugin-hello/plugin', state: 'active', files: [join(profileDir, 'node_modules/dsh-plugin-hello/cordis.patch.yml')],
        provides: ['hello'], listeners: { 'launcher/signal': 1 },
        effects: [{ label: 'ctx.provide("hello")' }, { label: 'ctx.on("launcher/signal")' }, { label: 'hello interval' }, { label: 'launcher.hold()' }],
      }],
      services: ['hello', 'launcher'],
      listeners: { 'launcher/signal': 1 },
    })

    // a broken edit keeps the last good tree and says why
    const patch = join(profileDir, 'cordis.patch.yml')
    writeFileSync(patch, '- id: hello\n  disabled: [\n')
    const broken = await treeAt(report, 2)
    expect([broken.event, broken.ok, broken.error?.code, broken.rows[0]?.state, broken.services]).toEqual(['reload', false, 'PATCH_SYNTAX', 'active', ['hello', 'launcher']])

    // repairing it reloads with no change
    writeFileSync(patch, '# nothing\n')
    const repaired = await treeAt(report, 3)
    expect([repaired.ok, repaired.rows[0]?.state]).toEqual([true, 'active'])

    // disabling the row from the home patch unwinds its service, listener, timer and hold:
    // nothing holds the process any more, so it exits 0
    const homePatch = join(home, 'cordis.patch.yml')
    writeFileSync(homePatch, '- id: hello\n  disabled: true\n')
    const run = await app.done
    const disabled = readTree(report)!
    expect(disabled).toEqual({
      generation: 4, event: 'reload', ok: true, profile: 't',
      rows: [{ id: 'hello', name: 'dsh-plugin-hello/plugin', state: 'disabled', files: [join(profileDir, 'node_modules/dsh-plugin-hello/cordis.patch.yml'), homePatch], provides: [], listeners: {}, effects: [] }],
      services: ['launcher'],
      listeners: {},
    })
    expect(run.code).toBe(0)
    expect(run.stderr).not.toMatch(STACK)
    expect(run.stderr.split('\n')).toEqual([
      `reload of ${patch} failed; keeping the last good tree:`,
      `  PATCH_SYNTAX: ${patch}:3:1: Flow sequence in block collection must be sufficiently indented and end with a ]`,
      '  hint: fix the YAML syntax at that line',
      `reloaded ${patch}: no row changed`,
      `reloaded ${homePatch}: removed hello`,
      '',
    ])

    const remove = await dsh(['plugin', '--profile', 't', 'remove', 'dsh-plugin-hello'], env)
    expect([remove.code, remove.stdout]).toEqual([0, 'removed bundle dsh-plugin-hello from profile t\n'])
    const removedTwice = await dsh(['plugin', '--profile', 't', 'remove', 'dsh-plugin-hello'], env)
    expect([removedTwice.code, removedTwice.stderr]).toEqual([1, 'PLUGIN_NOT_INSTALLED: dsh-plugin-hello is not installed in profile t\n  hint: see what is: dsh plugin --profile t list\n'])
    expect((JSON.parse(readFileSync(join(profileDir, 'package.json'), 'utf8')) as { dsh: unknown }).dsh).toEqual({ profile: { version: 1, bundles: [] } })
  })

  it('a holding surface gets SIGTERM as launcher/signal and chooses the exit code', async () => {
    const { home, env } = tempHome()
    const pkg = join(home, 'pkg')
    writePluginPackage(pkg)
    const seen = join(home, 'seen.json')
    makeProfile(home, 's', [], `- insert:\n    - {id: hello, name: ${join(pkg, 'plugin.js')}, config: {greeting: x, seen: ${seen}}}\n`)
    const report = join(home, 'tree.json')
    // launcher flags are the launcher's anywhere; after `--` everything is the app's
    const app = start(['--profile', 's', 'some', '--', '--patch', 'is-for-the-app', '--', 'x'], { ...env, DSH_TREE_REPORT: report }, { cwd: pkg })
    await treeAt(report, 1)
    expect(JSON.parse(readFileSync(seen, 'utf8'))).toEqual({ argv: ['some', '--patch', 'is-for-the-app', '--', 'x'], profile: 's', home, cwd: pkg, version: '0.1.0' })
    app.child.kill('SIGTERM')
    const run = await app.done
    expect([run.code, run.stdout, run.stderr]).toEqual([7, '', '\nSIGTERM: asking the surface to stop (send it again to exit now)\n'])
  })

  it('a holding surface with no handle of its own keeps the process until a second SIGINT forces exit 130', async () => {
    const { home, env } = tempHome()
    writeFileSync(join(home, 'idle.mjs'), "export const inject = ['launcher']\nexport function apply(ctx) { ctx.launcher.hold() }\n")
    makeProfile(home, 'idle', [], '- insert:\n    - {id: idle, name: ../../idle.mjs}\n')
    const report = join(home, 'tree.json')
    const app = start(['--profile', 'idle'], { ...env, DSH_TREE_REPORT: report })
    await treeAt(report, 1)
    await new Promise((r) => setTimeout(r, 300))
    expect(app.child.exitCode).toBe(null)
    app.child.kill('SIGINT')
    await vi.waitFor(() => expect(app.stderr()).toContain('SIGINT: asking the surface to stop'), { timeout: 5000 })
    expect(app.child.exitCode).toBe(null)
    app.child.kill('SIGINT')
    const run = await app.done
    expect([run.code, run.stdout, run.stderr]).toEqual([130, '', '\nSIGINT: asking the surface to stop (send it again to exit now)\n'])
  })
})
