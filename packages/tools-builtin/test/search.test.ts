import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import type { ToolDefinition } from '@dsh/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callTool, cleanupDirs, harness, toolTree, type Harness } from './helpers.js'

afterAll(cleanupDirs)

/** A workspace inside a repository-like parent whose .gitignore applies to it. */
async function workspace(root: Context): Promise<Harness> {
  const h = await harness(root)
  const put = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(h.cwd, rel)), { recursive: true })
    writeFileSync(path.join(h.cwd, rel), text)
  }
  put('.git/HEAD', 'needle in git\n')
  put('.gitignore', 'node_modules/\n*.log\n!keep.log\n')
  put('src/a.ts', 'const needle = 1\nconst other = 2\n')
  put('src/B.ts', 'NEEDLE upper\n')
  put('src/a-b.ts', 'needle dash\n')
  put('src/sub/c.ts', 'x\nneedle deep\n')
  put('src/sub/.gitignore', 'generated.ts\n')
  put('src/sub/generated.ts', 'needle generated\n')
  put('src/z.js', 'needle js\n')
  put('.hidden/h.ts', 'needle hidden\n')
  put('debug.log', 'needle log\n')
  put('keep.log', 'needle kept log\n')
  put('node_modules/pkg/index.ts', 'needle dependency\n')
  put('bin.dat', 'needle\0binary\n')
  return h
}

const engines = [['ripgrep', {}], ['the JS fallback', { ripgrep: 'never' }]] as const

describe.each(engines)('grep with %s', (_label, search) => {
  let root: Context
  let h: Harness
  beforeAll(async () => {
    root = await toolTree({ search })
    h = await workspace(root)
  })

  it('respects ignore files (nested and negated), skips .git and binary files, searches hidden files, in path order', async () => {
    const r = await callTool(h, 'grep', { pattern: 'needle' })
    expect(r.text).toBe([
      '.hidden/h.ts:1:needle hidden',
      'keep.log:1:needle kept log',
      'src/a-b.ts:1:needle dash',
      'src/a.ts:1:const needle = 1',
      'src/sub/c.ts:2:needle deep',
      'src/z.js:1:needle js',
    ].join('\n'))
    expect((root.tools.get('grep') as ToolDefinition).presentResult!({ pattern: 'needle' }, r.result)).toEqual({ card: 'search', text: r.text, matches: 6 })
  })

  it('applies the ignore files of parent directories when searching a subdirectory', async () => {
    const r = await callTool(h, 'grep', { pattern: 'needle', path: 'node_modules/..' })
    expect(r.text.split('\n')).toHaveLength(6)
    const sub = await callTool(h, 'grep', { pattern: 'needle', path: 'src/sub' })
    expect(sub.text).toBe('src/sub/c.ts:2:needle deep')
  })

  it('filters by glob, ignores case, caps results, searches one file', async () => {
    expect((await callTool(h, 'grep', { pattern: 'needle', glob: '*.ts', ignore_case: true })).text).toBe([
      '.hidden/h.ts:1:needle hidden', 'src/B.ts:1:NEEDLE upper', 'src/a-b.ts:1:needle dash', 'src/a.ts:1:const needle = 1', 'src/sub/c.ts:2:needle deep',
    ].join('\n'))
    expect((await callTool(h, 'grep', { pattern: 'needle', max_results: 2 })).text).toBe([
      '.hidden/h.ts:1:needle hidden', 'keep.log:1:needle kept log',
      '[showing the first 2 matches; narrow the pattern, path or glob, or raise max_results]',
    ].join('\n'))
    expect((await callTool(h, 'grep', { pattern: 'o', path: 'src/a.ts' })).text).toBe('src/a.ts:1:const needle = 1\nsrc/a.ts:2:const other = 2')
    expect((await callTool(h, 'grep', { pattern: 'absent-text' })).text).toBe('No matches for /absent-text/ in ..')
  })

  it('an invalid regex is a clear error result', async () => {
    const r = await callTool(h, 'grep', { pattern: 'a(' })
    expect(r.result.isError).toBe(true)
    expect(r.text).toMatch(/^Error: Invalid regex \/a\(\/: .+/)
  })
})

describe('glob', () => {
  let h: Harness
  let root: Context
  beforeAll(async () => {
    root = await toolTree()
    h = await workspace(root)
  })

  it('matches relative paths, respecting ignore files', async () => {
    expect((await callTool(h, 'glob', { pattern: '**/*.ts' })).text).toBe('.hidden/h.ts\nsrc/B.ts\nsrc/a-b.ts\nsrc/a.ts\nsrc/sub/c.ts')
    expect((await callTool(h, 'glob', { pattern: '*.log' })).text).toBe('keep.log')
    expect((await callTool(h, 'glob', { pattern: '*.ts', path: 'src' })).text).toBe('src/B.ts\nsrc/a-b.ts\nsrc/a.ts')
    expect((await callTool(h, 'glob', { pattern: '*.py' })).text).toBe('No files match *.py in ..')
    const tool = root.tools.get('glob') as ToolDefinition
    expect(tool.presentCall!({ pattern: '**/*.ts', path: 'src' })).toEqual({ card: 'search', title: 'Glob **/*.ts', query: '**/*.ts', path: 'src' })
  })
})

describe('todo_write', () => {
  it('logs the full snapshot, answers with a summary and presents a checklist', async () => {
    const root = await toolTree()
    const h = await harness(root)
    const todos = [
      { content: 'Read the code', status: 'completed' },
      { content: 'Fix the bug', status: 'in_progress', activeForm: 'Fixing the bug' },
      { content: 'Run the tests', status: 'pending' },
    ]
    const r = await callTool(h, 'todo_write', { todos })
    expect(r.text).toBe('Plan updated: 3 items (1 completed, 1 in progress, 1 pending). Now: Fixing the bug.')
    expect(h.logs).toEqual([{ type: 'todo/write', data: { todos }, ignorable: true }])
    expect((root.tools.get('todo_write') as ToolDefinition).presentResult!({ todos }, r.result))
      .toEqual({ card: 'generic', text: '- [x] Read the code\n- [ ] **Fix the bug** (in progress)\n- [ ] Run the tests' })
  })
})
