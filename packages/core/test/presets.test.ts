import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SHIPPED_PRESETS, loadPresetDir, parsePreset, toolMatcher } from '../src/presets/presets.js'

describe('preset files', () => {
  it('parses every field; id from the file name, label from the id', () => {
    const text = `version: 1
description: Reviews diffs
persona: |
  Review carefully.
tools: [read, grep, "mcp__github__*"]
provider: anthropic
model: claude-opus-4-1
reasoningEffort: high
`
    expect(parsePreset(text, '/h/presets/reviewer.yaml')).toEqual({
      id: 'reviewer', label: 'reviewer', description: 'Reviews diffs', persona: 'Review carefully.',
      tools: ['read', 'grep', 'mcp__github__*'], provider: 'anthropic', model: 'claude-opus-4-1', reasoningEffort: 'high',
    })
    expect(parsePreset('version: 1\nid: quick\nlabel: Quick\n', '/h/presets/x.yml')).toEqual({ id: 'quick', label: 'Quick', description: '' })
  })

  it('refuses bad files with the file and key', () => {
    expect(() => parsePreset('version: 2\n', '/p/a.yaml')).toThrow('/p/a.yaml: version:')
    expect(() => parsePreset('version: 1\ntool: [read]\n', '/p/a.yaml')).toThrow(/\/p\/a\.yaml: .*tool/)
    expect(() => parsePreset('version: 1\nreasoningEffort: extreme\n', '/p/a.yaml')).toThrow('/p/a.yaml: reasoningEffort:')
    expect(() => parsePreset('version: 1\ntools: [read\n', '/p/a.yaml')).toThrow(/^\/p\/a\.yaml:\d+:\d+: /)
    expect(() => parsePreset('', '/p/a.yaml')).toThrow('/p/a.yaml: version:')
    expect(() => parsePreset('version: 1\n', '/p/My Preset.yaml')).toThrow('id: "My Preset" must be lower-case')
  })

  it('loads a directory, reporting broken files without failing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-presets-'))
    writeFileSync(join(dir, 'b.yaml'), 'version: 1\ndescription: B\n')
    writeFileSync(join(dir, 'a.yml'), 'version: 1\ndescription: A\n')
    writeFileSync(join(dir, 'broken.yaml'), 'version: 1\nmodel: [\n')
    writeFileSync(join(dir, 'notes.txt'), 'ignored')
    mkdirSync(join(dir, 'sub.yaml'))
    const { presets, problems } = loadPresetDir(dir)
    expect(presets.map((p) => p.id)).toEqual(['a', 'b'])
    expect(problems.map((p) => p.file)).toEqual([join(dir, 'broken.yaml'), join(dir, 'sub.yaml')])
    expect(problems[0]!.message).toMatch(new RegExp(`^${join(dir, 'broken.yaml')}:\\d+:\\d+: `))
    expect(loadPresetDir(join(dir, 'missing'))).toEqual({ presets: [], problems: [] })
  })

  it('ships standard, code and minimal; minimal neither writes nor runs', () => {
    expect(SHIPPED_PRESETS.map((p) => p.id)).toEqual(['standard', 'code', 'minimal'])
    expect(SHIPPED_PRESETS[0]).toEqual({ id: 'standard', label: 'Standard', description: 'Every tool and the default persona.' })
    expect(SHIPPED_PRESETS[2]!.tools).toEqual(['read', 'ls', 'glob', 'grep'])
  })

  it('matches tool allow-lists with * globs', () => {
    const match = toolMatcher(['read', 'mcp__github__*', 'a.b'])
    expect(['read', 'mcp__github__list', 'mcp__github__', 'a.b'].every(match)).toBe(true)
    expect(['reader', 'bash', 'mcp__gitlab__x', 'axb'].some(match)).toBe(false)
  })
})
