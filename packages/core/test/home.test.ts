import { mkdtempSync, readFileSync, statSync, writeFileSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { isDshError } from '@dsh/protocol'
import {
  credentialsFile, homeYamlCache, parseCredentials, parseSettings, readCredentials, readSettings, removeCredential, resolveHome,
  setCredential, settingsFile, writeSettings,
} from '../src/home/index.js'

const dir = () => mkdtempSync(join(tmpdir(), 'dsh-homefiles-'))

function failure(fn: () => unknown): string {
  try {
    fn()
    return 'ok'
  } catch (error) {
    return isDshError(error) ? `${error.code}: ${error.message}` : `not a DshError: ${String(error)}`
  }
}

describe('home paths', () => {
  it('DSH_HOME wins, else ~/.dsh', () => {
    expect([resolveHome({ DSH_HOME: '/x/h' }, '/home/u'), resolveHome({}, '/home/u'), resolveHome({ DSH_HOME: '' }, '/home/u')]).toEqual(['/x/h', '/home/u/.dsh', '/home/u/.dsh'])
    expect([settingsFile('/h'), credentialsFile('/h')]).toEqual(['/h/settings.yaml', '/h/.credentials.yaml'])
  })
})

describe('settings.yaml', () => {
  it('reads v1; a file without version: and no old keys is read as v1 with no note', () => {
    expect(parseSettings('version: 1\nmodel: deepseek-chat\nprovider: deepseek\npermissionMode: read-only\nreasoningEffort: high\n', '/s.yaml')).toEqual({
      value: { version: 1, model: 'deepseek-chat', provider: 'deepseek', permissionMode: 'read-only', reasoningEffort: 'high' }, notes: [],
    })
    expect(parseSettings('model: m\n', '/s.yaml')).toEqual({ value: { version: 1, model: 'm' }, notes: [] })
  })

  it('migrates the old snake_case keys once: the file is rewritten (comments kept) and the next read says nothing', () => {
    const file = join(dir(), 'settings.yaml')
    writeFileSync(file, '# mine\ndefault_model: m1 # the model\ndefault_provider: p1\npermission_mode: read-only\nreasoning_effort: high\n', { mode: 0o640 })
    const first = readSettings(file)
    expect(first.value).toEqual({ version: 1, model: 'm1', provider: 'p1', permissionMode: 'read-only', reasoningEffort: 'high' })
    expect(first.notes).toEqual([
      `${file}: key default_provider is now provider; the file was migrated to format v1`,
      `${file}: key default_model is now model; the file was migrated to format v1`,
      `${file}: key permission_mode is now permissionMode; the file was migrated to format v1`,
      `${file}: key reasoning_effort is now reasoningEffort; the file was migrated to format v1`,
    ])
    const text = readFileSync(file, 'utf8')
    expect(text).toContain('# mine')
    expect(text).toContain('model: m1 # the model')
    expect(statSync(file).mode & 0o777).toBe(0o640)
    expect(readSettings(file)).toEqual({ value: first.value, notes: [] })
  })

  it('fails closed: an unknown key or a bad value names the file, the key and the accepted values', () => {
    expect([
      failure(() => parseSettings('version: 1\nmodel: 3\n', '/s.yaml')),
      failure(() => parseSettings('permissionMode: read-only\nmodel: 5\n', '/s.yaml')),
      failure(() => parseSettings('version: 1\npermisionMode: read-only\n', '/s.yaml')),
      failure(() => parseSettings('version: 1\nreasoningEffort: extreme\n', '/s.yaml')),
      failure(() => parseSettings('version: 1\npermissionMode: yolo\n', '/s.yaml')),
      failure(() => parseSettings('version: 1\nmodel: new\ndefault_model: old\n', '/s.yaml')),
      failure(() => parseSettings('version: 2\n', '/s.yaml')),
      failure(() => parseSettings('- a\n', '/s.yaml')),
      failure(() => parseSettings('model: [\n', '/s.yaml')),
    ]).toEqual([
      'SETTINGS_INVALID: /s.yaml: key model: Invalid input: expected string, received number (accepted: a model id (e.g. deepseek-chat))',
      'SETTINGS_INVALID: /s.yaml: key model: Invalid input: expected string, received number (accepted: a model id (e.g. deepseek-chat))',
      'SETTINGS_INVALID: /s.yaml: key permisionMode: unknown key (did you mean "permissionMode"?); known keys: version, provider, model, permissionMode, reasoningEffort, world',
      'SETTINGS_INVALID: /s.yaml: key reasoningEffort: invalid value (accepted: off, low, medium, high, max)',
      'SETTINGS_INVALID: /s.yaml: key permissionMode: invalid value (accepted: read-only, workspace-write, danger-full-access)',
      'SETTINGS_INVALID: /s.yaml: key default_model: obsolete key (now model), and model is set too; remove default_model',
      'SETTINGS_INVALID: /s.yaml: key version: 2 is newer than this dsh reads (1); upgrade dsh',
      'SETTINGS_INVALID: /s.yaml: key (top level): expected a mapping of settings',
      'SETTINGS_INVALID: /s.yaml:2:1: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ])
  })

  it('through the parse cache: same result, an edit is seen, a corrupt entry is rebuilt, errors unchanged', () => {
    const home = dir()
    const file = settingsFile(home)
    const cache = homeYamlCache(home)
    expect(cache?.dir).toBe(join(home, 'cache', 'parsed'))
    writeFileSync(file, 'version: 1\nmodel: m1\n')
    expect(readSettings(file, cache)).toEqual(readSettings(file))
    const [entry] = readdirSync(cache!.dir).map((f) => join(cache!.dir, f))
    expect(readFileSync(entry!, 'utf8')).toContain('m1')
    expect(readSettings(file, cache).value.model).toBe('m1')
    writeFileSync(file, 'version: 1\nmodel: m2\n')
    expect(readSettings(file, cache).value.model).toBe('m2')
    writeFileSync(entry!, readFileSync(entry!, 'utf8').replace('m2', 'm3'))
    expect(readSettings(file, cache).value.model).toBe('m2')
    writeFileSync(file, 'version: 1\nmodel: 5\n')
    expect(failure(() => readSettings(file, cache))).toBe(failure(() => readSettings(file)))
    expect(failure(() => readSettings(file, cache))).toContain(`SETTINGS_INVALID: ${file}: key model: Invalid input`)
    writeFileSync(file, 'model: [\n')
    expect(failure(() => readSettings(file, cache))).toBe(`SETTINGS_INVALID: ${file}:2:1: Flow sequence in block collection must be sufficiently indented and end with a ]`)
  })

  it('a missing file is empty v1; written files are v1 and read back', () => {
    const file = join(dir(), 'settings.yaml')
    expect(readSettings(file)).toEqual({ value: { version: 1 }, notes: [] })
    writeSettings(file, { model: 'x' })
    expect(readSettings(file)).toEqual({ value: { version: 1, model: 'x' }, notes: [] })
  })
})

describe('.credentials.yaml', () => {
  it('set/remove write v1 atomically with mode 0600 and read back', () => {
    const d = dir()
    const file = join(d, 'sub', '.credentials.yaml')
    setCredential(file, 'deepseek', { apiKey: 'sk-one' })
    setCredential(file, 'openai', { apiKey: 'sk-two', baseUrl: 'http://127.0.0.1:9/v1' })
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(readFileSync(file, 'utf8')).toContain('version: 1')
    expect(readCredentials(file)).toEqual({ value: { version: 1, providers: { deepseek: { apiKey: 'sk-one' }, openai: { apiKey: 'sk-two', baseUrl: 'http://127.0.0.1:9/v1' } } }, notes: [] })
    expect([removeCredential(file, 'deepseek'), removeCredential(file, 'deepseek')]).toEqual([true, false])
    expect(readCredentials(file).value.providers).toEqual({ openai: { apiKey: 'sk-two', baseUrl: 'http://127.0.0.1:9/v1' } })
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(readdirSync(join(d, 'sub'))).toEqual(['.credentials.yaml'])
  })

  it('migrates the flat v0 layout, saying so', () => {
    expect(parseCredentials('deepseek_api_key: sk-a\ndeepseek_base_url: https://api.example.com\nanthropic_api_key: sk-b\n', '/c.yaml')).toEqual({
      value: { version: 1, providers: { deepseek: { apiKey: 'sk-a', baseUrl: 'https://api.example.com' }, anthropic: { apiKey: 'sk-b' } } },
      notes: ['/c.yaml: read credentials format v0 (flat <provider>_api_key keys) as v1; the file is rewritten in v1 the next time dsh saves it (dsh login)'],
    })
  })

  it('a damaged file names the file and the key, never the secret', () => {
    const errors = [
      failure(() => parseCredentials('version: 1\nproviders:\n  deepseek: {apiKey: 42}\n', '/c.yaml')),
      failure(() => parseCredentials('version: 1\nproviders:\n  deepseek: {apiKey: sk-SECRET, extra: 1}\n', '/c.yaml')),
      failure(() => parseCredentials('deepseek_api_key: sk-SECRET: x\n', '/c.yaml')),
      failure(() => parseCredentials('deepseek_token: sk-SECRET\n', '/c.yaml')),
      failure(() => parseCredentials('version: 1\nproviders:\n  deepseek: {apiKey: sk-SECRET, baseUrl: not a url}\n', '/c.yaml')),
    ]
    expect(errors).toEqual([
      'CREDENTIALS_INVALID: /c.yaml: key providers.deepseek.apiKey: Invalid input: expected string, received number',
      'CREDENTIALS_INVALID: /c.yaml: key providers.deepseek: Unrecognized key: "extra"',
      'CREDENTIALS_INVALID: /c.yaml:1:19: Nested mappings are not allowed in compact mappings',
      'CREDENTIALS_INVALID: /c.yaml: key deepseek_token: unknown key in a v0 credentials file (expected <provider>_api_key or <provider>_base_url)',
      'CREDENTIALS_INVALID: /c.yaml: key providers.deepseek.baseUrl: Invalid URL',
    ])
    for (const e of errors) expect(e).not.toContain('SECRET')
  })

  it('refuses to overwrite a damaged file', () => {
    const file = join(dir(), '.credentials.yaml')
    writeFileSync(file, 'version: 1\nproviders: [\n')
    expect(failure(() => setCredential(file, 'deepseek', { apiKey: 'k' }))).toMatch(/^CREDENTIALS_INVALID: .*\.credentials\.yaml:3:1: /)
    expect(readFileSync(file, 'utf8')).toBe('version: 1\nproviders: [\n')
  })
})
