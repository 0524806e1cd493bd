// Out-of-tree plugins under the bundled build (decision 0060): a plugin installed in a
// profile's node_modules imports `@dsh/*` and `@deepseek-ai/cordis` by name and gets the very
// modules the tree runs (one copy: `instanceof` holds for the tree's own services), even when
// the profile holds a copy of cordis of its own. Run with the built dsh, as a user would.
import { startMockModel, type MockModel } from '@dsh/testkit'
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT } from './helpers/dsh.js'
import { dsh, makeProfile, STACK, tempHome } from './launcher-helpers.js'

let model: MockModel
beforeAll(async () => { model = await startMockModel() })
afterAll(async () => { await model.close() })

const BUNDLES = ['@dsh/bundle-base', '@dsh/bundle-headless']

/** Writes package `name` into the profile's node_modules with one plugin file. */
function writePlugin(profileDir: string, name: string, source: string): void {
  const dir = join(profileDir, 'node_modules', name)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', type: 'module', exports: { './plugin': './plugin.js' } }))
  writeFileSync(join(dir, 'plugin.js'), source)
}

const PROBE = `
import { writeFileSync } from 'node:fs'
import { Context } from '@deepseek-ai/cordis'
import { AgentService, LlmService, PermissionService } from '@dsh/core'
import { DshError } from '@dsh/protocol'
import * as runner from '@dsh/headless/runner'
export const name = 'probe'
export const inject = ['llm', 'permission', 'agents']
export function apply(ctx, config) {
  writeFileSync(config.out, JSON.stringify({
    context: ctx instanceof Context,
    llm: ctx.llm instanceof LlmService,
    permission: ctx.permission instanceof PermissionService,
    agents: ctx.agents instanceof AgentService,
    error: new DshError('X', 'y').code,
    runner: typeof runner.apply,
  }))
}
`

describe('an out-of-tree plugin under the bundled build', () => {
  it('imports @dsh/* and cordis by name and shares the tree\u2019s module copies', async () => {
    const { home, env } = tempHome()
    const out = join(home, 'probe.json')
    const profileDir = makeProfile(home, 'p', BUNDLES, `- insert:\n    - id: probe\n      name: dsh-probe/plugin\n      config: {out: ${JSON.stringify(out)}}\n`)
    writePlugin(profileDir, 'dsh-probe', PROBE)
    // a second copy of cordis in the profile, which the plugin would load without the bundle's mapping
    for (const pkg of ['@deepseek-ai/cordis', '@deepseek-ai/cosmokit']) cpSync(join(ROOT, 'node_modules', pkg), join(profileDir, 'node_modules', pkg), { recursive: true, dereference: true })
    model.setScript([{ text: 'done' }])
    const run = await dsh(['--profile', 'p', 'go'], { ...env, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key' })
    expect([run.code, run.stdout], run.stderr).toEqual([0, 'done\n'])
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual({ context: true, llm: true, permission: true, agents: true, error: 'X', runner: 'function' })
  })

  it('importing a @dsh module that does not exist fails the boot naming the row, with no stack trace', async () => {
    const { home, env } = tempHome()
    const profileDir = makeProfile(home, 'p', BUNDLES, '- insert:\n    - id: broken\n      name: dsh-broken/plugin\n')
    writePlugin(profileDir, 'dsh-broken', `import { nothing } from '@dsh/core/no-such-plugin'\nexport function apply() { return nothing }\n`)
    const run = await dsh(['--profile', 'p', 'go'], { ...env, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key' })
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/BOOT_FAILED/)
    expect(run.stderr).toMatch(/row broken \(dsh-broken\/plugin\): IMPORT_FAILED/)
    expect(run.stderr).toContain('@dsh/core/no-such-plugin is not a module of this build of dsh')
    expect(run.stderr).not.toMatch(STACK)
  })

  it('with DSH_DEBUG=1 a stack trace names the TypeScript sources, through the bundle\u2019s source maps', async () => {
    const { home, env } = tempHome()
    makeProfile(home, 'p', BUNDLES, "- insert:\n    - id: nope\n      name: '@dsh/core/nope'\n")
    const run = await dsh(['--profile', 'p', 'go'], { ...env, DSH_DEBUG: '1' })
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/row nope \(@dsh\/core\/nope\): MODULE_NOT_FOUND/)
    expect(run.stderr).toMatch(STACK)
    expect(run.stderr).toContain(`(${join(ROOT, 'packages/boot/src/mount/mounter.ts')}:`)
    expect(run.stderr).not.toContain('/dist/bundle/')
  })
})
