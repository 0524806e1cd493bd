import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import type { SandboxMode } from '@dsh/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callTool, cleanupDirs, harness, tempDir, toolTree } from './helpers.js'

// Issue 12 item 3: the file tools refuse dsh's secret files by name in every preset.
const CANARY = 'sk-canary-files-55c2b0'
let home: string
let store: string
let savedHome: string | undefined
const roots: Context[] = []

beforeAll(() => {
  savedHome = process.env.DSH_HOME
  home = tempDir('home')
  store = path.join(home, '.credentials.yaml')
  writeFileSync(store, `version: 1\nproviders:\n  deepseek: {apiKey: ${CANARY}}\n`, { mode: 0o600 })
  process.env.DSH_HOME = home
})
afterAll(async () => {
  for (const r of roots) await r.fiber.dispose()
  if (savedHome === undefined) delete process.env.DSH_HOME
  else process.env.DSH_HOME = savedHome
  cleanupDirs()
})

const MODES: SandboxMode[] = ['read-only', 'workspace-write', 'danger-full-access']
const engines = [['ripgrep', {}], ['the JS fallback', { ripgrep: 'never' }]] as const

describe.each(engines)('secret files with grep by %s', (_label, search) => {
  it.each(MODES)('%s: read, write, edit and grep refuse the store (also through a symlink in the workspace)', async (mode) => {
    const root = await toolTree({ search })
    roots.push(root)
    const h = await harness(root, mode)
    symlinkSync(store, path.join(h.cwd, 'link.yaml'))
    mkdirSync(path.join(h.cwd, 'sub'))
    for (const p of [store, 'link.yaml']) {
      const read = await callTool(h, 'read', { path: p })
      expect(read.result.isError).toBe(true)
      expect(read.text).toContain("dsh's secret files")
      const write = await callTool(h, 'write', { path: p, content: 'owned' })
      expect(write.result.isError).toBe(true)
      const edit = await callTool(h, 'edit', { path: p, old_string: CANARY, new_string: 'x' })
      expect(edit.result.isError).toBe(true)
      for (const r of [read, write, edit]) expect(r.text).not.toContain(CANARY)
    }
    const grep = await callTool(h, 'grep', { pattern: 'sk-canary', path: home })
    expect(grep.text).not.toContain(CANARY)
    writeFileSync(path.join(h.cwd, 'sub', 'ok.txt'), 'sk-canary-not-secret\n')
    expect((await callTool(h, 'grep', { pattern: 'sk-canary' })).text).toBe('sub/ok.txt:1:sk-canary-not-secret')
    expect(readFileSync(store, 'utf8')).toContain(CANARY)
  })
})

describe('secret files and bash', () => {
  it.each(['read-only', 'workspace-write'] as const)('%s: cat of the store prints nothing of it', async (mode) => {
    const root = await toolTree()
    roots.push(root)
    const h = await harness(root, mode)
    const r = await callTool(h, 'bash', { command: `cat ${store}; base64 ${store}; grep -r sk- ${home}; echo end`, description: 'try' })
    expect(r.text).toContain('end')
    expect(r.text).not.toContain(CANARY)
    expect(r.text).not.toContain(Buffer.from(`apiKey: ${CANARY}`).toString('base64').slice(0, 16))
  })
})
