import { existsSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import * as credentialsPlugin from '../src/plugins/credentials.js'
import * as settingsPlugin from '../src/plugins/settings.js'

function logs(root: Context): string[] {
  const lines: string[] = []
  root.logger.exporter({ levels: { default: 3 }, export: (m) => lines.push(`${m.type} [${m.name}] ${m.args.join(' ')}`) })
  return lines
}

const dir = () => mkdtempSync(join(tmpdir(), 'dsh-homeplugins-'))
const roots: Context[] = []
afterEach(async () => { for (const r of roots.splice(0)) await r.fiber.dispose() })

describe('@dsh/core/settings', () => {
  it('provides the parsed settings and reloads them when the file changes', async () => {
    const file = join(dir(), 'settings.yaml')
    writeFileSync(file, 'version: 1\nmodel: a\n')
    const root = new Context()
    roots.push(root)
    const seen: unknown[] = []
    root.on('settings/changed', (s) => seen.push(s))
    await root.plugin(settingsPlugin, { file })
    expect(root.settings.get()).toEqual({ version: 1, model: 'a' })
    writeFileSync(`${file}.tmp`, 'version: 1\nmodel: b\n')
    renameSync(`${file}.tmp`, file)
    await vi.waitFor(() => expect(root.settings.get()).toEqual({ version: 1, model: 'b' }), { timeout: 3000 })
    expect(seen).toEqual([{ version: 1, model: 'b' }])
  })

  it('a settings file named by config never writes the parse cache into $DSH_HOME; the home\'s own file does', async () => {
    const home = dir()
    const saved = process.env['DSH_HOME']
    process.env['DSH_HOME'] = home
    try {
      const file = join(dir(), 'settings.yaml')
      writeFileSync(file, 'version: 1\nmodel: a\n')
      const root = new Context()
      roots.push(root)
      await root.plugin(settingsPlugin, { file })
      expect(root.settings.get()).toEqual({ version: 1, model: 'a' })
      expect(existsSync(join(home, 'cache'))).toBe(false)
      writeFileSync(join(home, 'settings.yaml'), 'version: 1\nmodel: h\n')
      const own = new Context()
      roots.push(own)
      await own.plugin(settingsPlugin, {})
      expect(own.settings.get()).toEqual({ version: 1, model: 'h' })
      expect(existsSync(join(home, 'cache', 'parsed'))).toBe(true)
    } finally {
      if (saved === undefined) delete process.env['DSH_HOME']
      else process.env['DSH_HOME'] = saved
    }
  })

  it('a damaged file at start fails the plugin (nothing runs on defaults); damaged later, the last good settings stay', async () => {
    const file = join(dir(), 'settings.yaml')
    writeFileSync(file, 'permissionMode: read-only\nmodel: 5\n')
    const bad = new Context()
    roots.push(bad)
    await expect(bad.plugin(settingsPlugin, { file })).rejects.toMatchObject({ code: 'SETTINGS_INVALID' })
    expect(bad.get('settings', false)).toBeUndefined()

    writeFileSync(file, 'default_model: a\n')
    const root = new Context()
    roots.push(root)
    const lines = logs(root)
    await root.plugin(settingsPlugin, { file })
    expect(root.settings.get()).toEqual({ version: 1, model: 'a' })
    writeFileSync(file, 'version: 1\nmodel: [1]\n')
    await vi.waitFor(() => expect(root.settings.error?.code).toBe('SETTINGS_INVALID'), { timeout: 3000 })
    expect(root.settings.get()).toEqual({ version: 1, model: 'a' })
    expect(lines).toEqual([
      `warn [settings] ${file}: key default_model is now model; the file was migrated to format v1`,
      `warn [settings] SETTINGS_INVALID: ${file}: key model: Invalid input: expected string, received array (accepted: a model id (e.g. deepseek-chat))\n  hint: fix or remove model in ${file}`,
    ])
  })
})

describe('@dsh/core/credentials', () => {
  it('reads the file first, then the environment, and re-reads when the file changes', async () => {
    const file = join(dir(), '.credentials.yaml')
    process.env.ZZTEST_API_KEY = 'from-env'
    process.env.OTHER_KEY_VAR = 'other-env'
    const root = new Context()
    roots.push(root)
    const lines = logs(root)
    await root.plugin(credentialsPlugin, { file })
    const c = root.credentials
    expect([c.getApiKey('zztest'), c.getApiKey('zztest', 'OTHER_KEY_VAR'), c.getApiKey('none'), c.providers()]).toEqual(['from-env', 'other-env', undefined, []])
    writeFileSync(file, 'version: 1\nproviders:\n  zztest: {apiKey: from-file}\n')
    await vi.waitFor(() => expect(c.getApiKey('zztest')).toBe('from-file'), { timeout: 3000 })
    c.set('second', { apiKey: 'k2', baseUrl: 'http://127.0.0.1:1/v1' })
    expect([c.getApiKey('second'), c.getBaseUrl('second'), c.providers()]).toEqual(['k2', 'http://127.0.0.1:1/v1', ['zztest', 'second']])
    expect(c.remove('zztest')).toBe(true)
    expect(c.getApiKey('zztest')).toBe('from-env')
    // damage: keys from the file are dropped, the environment still answers, the log names file + key only
    writeFileSync(file, 'version: 1\nproviders:\n  zztest: {apiKey: sk-SECRET, bad: 1}\n')
    await vi.waitFor(() => expect(c.error?.code).toBe('CREDENTIALS_INVALID'), { timeout: 3000 })
    expect(c.getApiKey('zztest')).toBe('from-env')
    expect(lines.join('\n')).not.toContain('SECRET')
    expect(lines.at(-1)).toBe(`warn [credentials] CREDENTIALS_INVALID: ${file}: key providers.zztest: Unrecognized key: "bad"\n  hint: fix providers.zztest in ${file}, or store the key again with \`dsh login\``)
    delete process.env.ZZTEST_API_KEY
    delete process.env.OTHER_KEY_VAR
  })

  it('unloading the plugin closes its watcher and withdraws the service', async () => {
    const file = join(dir(), '.credentials.yaml')
    const root = new Context()
    const fiber = await root.plugin(credentialsPlugin, { file })
    expect(fiber.getEffects().map((e) => e.label)).toEqual(['ctx.provide("credentials")', `watch credentials: ${file}`])
    await fiber.dispose()
    expect([root.get('credentials', false), fiber.getEffects()]).toEqual([undefined, []])
  })
})
