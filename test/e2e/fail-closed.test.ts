import { existsSync, mkdirSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { runDsh } from './helpers/dsh.js'
import { useDshWorld } from './helpers/world.js'

// Issue 12 item 2: configuration fails closed — nothing runs on a bad setting.
const world = useDshWorld({ logsCheck: false })
const STACK = /\n\s+at .+:\d+:\d+/

function sessionFiles(): string[] {
  const dir = join(world.home, 'sessions')
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith('.jsonl')) : []
}

// a run that gets past the settings has an answer
beforeEach(() => world.model.setScript([{ text: 'done' }]))

describe('configuration fails closed', () => {
  it.each([
    ['one bad value next to a safety setting', 'permissionMode: read-only\nmodel: 5\n', 'key model: Invalid input: expected string, received number (accepted: a model id (e.g. deepseek-chat))'],
    ['a misspelled key', 'version: 1\npermisionMode: read-only\n', 'key permisionMode: unknown key (did you mean "permissionMode"?); known keys: version, provider, model, permissionMode, reasoningEffort, world'],
    ['a bad value', 'version: 1\nreasoningEffort: extreme\n', 'key reasoningEffort: invalid value (accepted: off, low, medium, high, max)'],
  ])('settings.yaml with %s: an error naming file and key, exit non-zero, no session, no request', async (_what, text, detail) => {
    const file = join(world.home, 'settings.yaml')
    writeFileSync(file, text)
    const run = await world.headless(['write a file'])
    expect(run.code).not.toBe(0)
    expect(run.stderr).toContain(`SETTINGS_INVALID: ${file}: ${detail}`)
    expect(run.stderr).toContain('BOOT_FAILED')
    expect(run.stderr).not.toMatch(STACK)
    expect(world.model.requests).toEqual([])
    expect(sessionFiles()).toEqual([])
  })

  it('a settings.yaml or .credentials.yaml that is a directory is named, not INTERNAL: EISDIR', async () => {
    mkdirSync(join(world.home, 'settings.yaml'), { recursive: true })
    const run = await world.headless(['hi'])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`SETTINGS_INVALID: ${join(world.home, 'settings.yaml')}: cannot read it (it is a directory, not a file)`)
    expect(run.stderr).not.toContain('INTERNAL')
    expect(world.model.requests).toEqual([])
    expect(sessionFiles()).toEqual([])
    rmdirSync(join(world.home, 'settings.yaml'))
    mkdirSync(join(world.home, '.credentials.yaml'))
    const login = await runDsh(['login'], { cwd: world.workspace, env: { DSH_HOME: world.home }, input: 'sk-typed\n' })
    expect(login.code).toBe(1)
    expect(login.stderr).toContain(`CREDENTIALS_INVALID: ${join(world.home, '.credentials.yaml')}: cannot read it (it is a directory, not a file)`)
    expect(login.stderr).not.toMatch(STACK)
  })

  it('a settings file without version: runs with no warning', async () => {
    writeFileSync(join(world.home, 'settings.yaml'), 'permissionMode: read-only\n')
    const run = await world.headless(['hi'])
    expect(run.code).toBe(0)
    expect(run.stderr).not.toMatch(/settings|format v0|warn/)
  })

  it('an MCP server entry with an unknown key stops the run, naming the key', async () => {
    mkdirSync(world.home, { recursive: true })
    writeFileSync(join(world.home, 'cordis.patch.yml'), '- id: mcp\n  config:\n    servers:\n      fs: {command: node, enviroment: {A: "1"}}\n')
    const run = await world.headless(['hi'])
    expect(run.code).not.toBe(0)
    expect(run.stderr).toContain('config.servers.fs: unknown key "enviroment" in a server entry')
    expect(world.model.requests).toEqual([])
    expect(sessionFiles()).toEqual([])
  })
})
