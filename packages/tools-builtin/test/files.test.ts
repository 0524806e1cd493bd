import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import type { ToolDefinition } from '@dsh/core'
import { beforeEach, afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as memoryStorePlugin from '@dsh/core/memory-store'
import * as sessionsPlugin from '@dsh/core/sessions'
import { applyEdits } from '../src/files/apply-edits.js'
import * as filesPlugin from '../src/plugins/files.js'
import { callTool, cleanupDirs, harness, tempDir, toolTree, type Harness } from './helpers.js'

let root: Context
let h: Harness

beforeAll(async () => { root = await toolTree() })
beforeEach(async () => { h = await harness(root) })
afterAll(cleanupDirs)

const file = (rel: string) => path.join(h.cwd, rel)
const tool = (name: string) => root.tools.get(name) as ToolDefinition

describe('read', () => {
  it('numbers lines, pages with offset/limit, logs the stamp, presents a read card', async () => {
    writeFileSync(file('a.txt'), 'one\ntwo\nthree\nfour\n')
    const r = await callTool(h, 'read', { path: 'a.txt', offset: 2, limit: 2 })
    expect(r.text).toBe('     2\ttwo\n     3\tthree\n[showing lines 2-3 of 4; call read with offset=4 to continue]')
    expect(h.logs).toEqual([{ type: 'file/read', data: { path: file('a.txt'), mtimeMs: expect.any(Number), size: 19 }, ignorable: true }])
    expect(tool('read').presentCall!({ path: 'a.txt', offset: 2, limit: 2 })).toEqual({ card: 'read', title: 'Read a.txt', path: 'a.txt', line: 2, limit: 2 })
    expect(tool('read').presentResult!({ path: 'a.txt' }, r.result)).toEqual({ card: 'read', path: 'a.txt', text: 'two\nthree' })
    expect((await callTool(h, 'read', { path: 'a.txt' })).text).toBe('     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour')
  })

  it('cuts long lines and caps the default window at 2000 lines', async () => {
    writeFileSync(file('long.txt'), `${'x'.repeat(2500)}\n${Array.from({ length: 2500 }, (_, i) => `l${i + 2}`).join('\n')}\n`)
    const r = await callTool(h, 'read', { path: 'long.txt' })
    const lines = r.text.split('\n')
    expect(lines[0]).toBe(`     1\t${'x'.repeat(2000)} … [500 more characters]`)
    expect(lines.length).toBe(2001)
    expect(lines.at(-1)).toBe('[showing lines 1-2000 of 2501; call read with offset=2001 to continue]')
  })

  it('refuses binary files with an explanation, directories, missing files and offsets past the end', async () => {
    writeFileSync(file('img.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]))
    const bin = await callTool(h, 'read', { path: 'img.png' })
    expect(bin).toMatchObject({ result: { isError: true } })
    expect(bin.text).toBe('Error: img.png is a binary file (12 bytes, a PNG image); read only shows text. Inspect it with bash instead, e.g. `file img.png` or `xxd img.png | head -n 20`.')
    mkdirSync(file('d'))
    expect((await callTool(h, 'read', { path: 'd' })).text).toBe('Error: d is a directory; use ls to list it.')
    expect((await callTool(h, 'read', { path: 'nope.txt' })).text).toBe('Error: nope.txt does not exist.')
    writeFileSync(file('s.txt'), 'a\n')
    expect((await callTool(h, 'read', { path: 's.txt', offset: 5 })).text).toBe('Error: offset 5 is past the end: the file has 1 lines.')
  })

  it('refuses devices and FIFOs instead of reading without end or blocking', async () => {
    expect((await callTool(h, 'read', { path: '/dev/zero' })).text).toBe('Error: /dev/zero is not a regular file (a device, FIFO or socket): read only reads files.')
    execFileSync('mkfifo', [file('pipe')])
    expect((await callTool(h, 'read', { path: 'pipe' })).text).toBe('Error: pipe is not a regular file (a device, FIFO or socket): read only reads files.')
  })

  it('caps huge files and says how to page through them', async () => {
    writeFileSync(file('huge.txt'), 'line\n'.repeat(2_200_000))
    expect((await callTool(h, 'read', { path: 'huge.txt' })).text).toBe('Error: huge.txt is 11000000 bytes, over the 10485760-byte limit of read. '
      + "Page through it with bash (e.g. `sed -n '1,200p' huge.txt`), or search it with grep.")
  })

  it('reads outside the workspace (every mode may read)', async () => {
    const outside = tempDir('outside')
    writeFileSync(path.join(outside, 'o.txt'), 'out\n')
    expect((await callTool(h, 'read', { path: path.join(outside, 'o.txt') })).text).toBe('     1\tout')
  })
})

describe('write', () => {
  it('creates files (with parents) and presents a diff card', async () => {
    const r = await callTool(h, 'write', { path: 'new/dir/f.txt', content: 'a\nb\n' })
    expect(r.text).toBe('Created new/dir/f.txt (2 lines, 4 bytes).')
    expect(readFileSync(file('new/dir/f.txt'), 'utf8')).toBe('a\nb\n')
    expect(tool('write').presentResult!({ path: 'new/dir/f.txt', content: 'a\nb\n' }, r.result))
      .toEqual({ card: 'diff', diffs: [{ path: 'new/dir/f.txt', oldText: null, newText: 'a\nb\n' }], text: r.text })
    expect(h.logs.map((l) => l.type)).toEqual(['file/write'])
  })

  it('refuses to overwrite a file not read in this session, then allows it after a read', async () => {
    writeFileSync(file('x.txt'), 'original')
    const r = await callTool(h, 'write', { path: 'x.txt', content: 'new' })
    expect(r.text).toBe('Error: x.txt already exists and you have not read it in this session. Read it first (or change it with edit), so you do not overwrite content you have not seen.')
    expect(readFileSync(file('x.txt'), 'utf8')).toBe('original')
    await callTool(h, 'read', { path: 'x.txt' })
    expect((await callTool(h, 'write', { path: 'x.txt', content: 'new' })).text).toBe('Overwrote x.txt (1 line, 3 bytes).')
    expect(readFileSync(file('x.txt'), 'utf8')).toBe('new')
  })

  it('denies `..` and symlink escapes under workspace-write, everything under read-only', async () => {
    const outside = tempDir('outside')
    const rel = path.relative(h.cwd, path.join(outside, 'esc.txt'))
    const dots = await callTool(h, 'write', { path: rel, content: 'x' })
    expect(dots.text).toMatch(/^Error \(PATH_DENIED\): Cannot write .*esc\.txt: outside the writable roots/)
    symlinkSync(outside, file('link'))
    const viaLink = await callTool(h, 'write', { path: 'link/esc.txt', content: 'x' })
    expect(viaLink.text).toContain(`(it resolves to ${outside}/esc.txt)`)
    expect(existsSync(path.join(outside, 'esc.txt'))).toBe(false)
    const ro = await harness(root, 'read-only')
    expect((await callTool(ro, 'write', { path: 'f.txt', content: 'x' })).text).toMatch(/^Error \(PATH_DENIED\): .*read-only mode/)
    expect(existsSync(path.join(ro.cwd, 'f.txt'))).toBe(false)
  })

  it('never writes through a hard link to an outside file', async () => {
    const outside = tempDir('outside')
    writeFileSync(path.join(outside, 'victim.txt'), 'keep me\n')
    linkSync(path.join(outside, 'victim.txt'), file('hard.txt'))
    await callTool(h, 'read', { path: 'hard.txt' })
    await callTool(h, 'edit', { path: 'hard.txt', old_string: 'keep', new_string: 'lose' })
    expect(readFileSync(file('hard.txt'), 'utf8')).toBe('lose me\n')
    expect(readFileSync(path.join(outside, 'victim.txt'), 'utf8')).toBe('keep me\n')
  })
})

describe('edit', () => {
  beforeEach(() => writeFileSync(file('code.ts'), 'const a = 1\nconst b = 2\nconst a2 = 1\n'))

  it('replaces text matching once and presents old and new text', async () => {
    const r = await callTool(h, 'edit', { path: 'code.ts', old_string: 'const b = 2', new_string: 'const b = 3' })
    expect(r.text).toBe('Edited code.ts: 1 replacement.')
    expect(readFileSync(file('code.ts'), 'utf8')).toBe('const a = 1\nconst b = 3\nconst a2 = 1\n')
    const args = { path: 'code.ts', old_string: 'const b = 2', new_string: 'const b = 3' }
    expect(tool('edit').presentCall!(args)).toEqual({ card: 'diff', title: 'Edit code.ts', path: 'code.ts', oldText: 'const b = 2', newText: 'const b = 3' })
    expect(tool('edit').presentResult!(args, r.result)).toEqual({ card: 'diff', diffs: [{ path: 'code.ts', oldText: 'const b = 2', newText: 'const b = 3' }], text: r.text })
  })

  it('an old text matching twice fails with the lines and context, and changes nothing', async () => {
    const r = await callTool(h, 'edit', { path: 'code.ts', old_string: '= 1', new_string: '= 9' })
    expect(r.text).toBe('Error: old_string matches 2 times (at lines 1, 3). Include more surrounding lines in old_string so it matches exactly once, '
      + 'or set replace_all: true to replace every match.\n'
      + '     1\tconst a = 1\n     2\tconst b = 2\n     3\tconst a2 = 1\n…\n     1\tconst a = 1\n     2\tconst b = 2\n     3\tconst a2 = 1\n     4\t')
    expect(readFileSync(file('code.ts'), 'utf8')).toBe('const a = 1\nconst b = 2\nconst a2 = 1\n')
    expect((await callTool(h, 'edit', { path: 'code.ts', old_string: '= 1', new_string: '= 9', replace_all: true })).text).toBe('Edited code.ts: 2 replacements.')
  })

  it('an old text matching nowhere fails and points at a near match', async () => {
    const r = await callTool(h, 'edit', { path: 'code.ts', old_string: 'const b = 2\n  const a2 = 1', new_string: 'x' })
    expect(r.text).toBe('Error: old_string was not found. Its first line ("const b = 2") appears at line 2, so the rest differs '
      + '(whitespace, indentation or later lines). The file there reads:\n     1\tconst a = 1\n     2\tconst b = 2\n     3\tconst a2 = 1\n     4\t')
    expect((await callTool(h, 'edit', { path: 'code.ts', old_string: 'zzz', new_string: 'x' })).text)
      .toBe('Error: old_string was not found. Read the file again and copy old_string exactly, including whitespace and indentation.')
  })

  it('multi-edit applies all or none', async () => {
    const bad = await callTool(h, 'edit', { path: 'code.ts', edits: [{ old_string: 'const a = 1', new_string: 'let a = 1' }, { old_string: 'missing', new_string: 'x' }] })
    expect(bad.text).toMatch(/^Error: Edit 2 of 2 \(no edit was applied\): old_string was not found/)
    expect(readFileSync(file('code.ts'), 'utf8')).toBe('const a = 1\nconst b = 2\nconst a2 = 1\n')
    const good = await callTool(h, 'edit', { path: 'code.ts', edits: [{ old_string: 'const a = 1', new_string: 'let a = 1' }, { old_string: 'let a = 1\nconst b', new_string: 'let a = 1\nlet b' }] })
    expect(good.text).toBe('Edited code.ts: 2 edits, 2 replacements.')
    expect(readFileSync(file('code.ts'), 'utf8')).toBe('let a = 1\nlet b = 2\nconst a2 = 1\n')
  })

  it('refuses an edit of a file that changed on disk since it was read', async () => {
    await callTool(h, 'read', { path: 'code.ts' })
    writeFileSync(file('code.ts'), 'const a = 1\nconst b = 2\nconst a2 = 1\n// changed\n')
    const r = await callTool(h, 'edit', { path: 'code.ts', old_string: 'const b = 2', new_string: 'const b = 3' })
    expect(r.text).toMatch(/^Error: code\.ts changed on disk since you last read or wrote it \(now 48 bytes, modified .*; you saw 37 bytes from .*\)\. Read it again, then redo the edit against the current content\.$/)
    expect(readFileSync(file('code.ts'), 'utf8')).toContain('// changed')
    await callTool(h, 'read', { path: 'code.ts' })
    expect((await callTool(h, 'edit', { path: 'code.ts', old_string: 'const b = 2', new_string: 'const b = 3' })).text).toBe('Edited code.ts: 1 replacement.')
    // A same-size change is caught by the mtime.
    writeFileSync(file('code.ts'), 'const a = 1\nconst b = 4\nconst a2 = 1\n// changed\n')
    utimesSync(file('code.ts'), new Date(), new Date(Date.now() + 5000))
    expect((await callTool(h, 'edit', { path: 'code.ts', old_string: 'const b = 4', new_string: 'const b = 5' })).text).toContain('changed on disk')
  })

  it('stamps are per session', async () => {
    await callTool(h, 'read', { path: 'code.ts' })
    writeFileSync(file('code.ts'), 'const a = 1\nconst b = 2\nconst a2 = 1\n// more\n')
    // Another session never read it: the exact match is enough.
    const other = { ...h, sessionId: 'session-2' }
    expect((await callTool(other, 'edit', { path: 'code.ts', old_string: '// more', new_string: '// other' })).text).toBe('Edited code.ts: 1 replacement.')
  })

  it('after a restart the stamps are rebuilt from the session\'s logged file/read events', async () => {
    const tree = await toolTree()
    await tree.plugin(memoryStorePlugin, memoryStorePlugin.Config.parse(undefined))
    await tree.plugin(sessionsPlugin, sessionsPlugin.Config.parse(undefined))
    const session = await tree.sessions.create({ cwd: h.cwd })
    const sh: Harness = { ...(await harness(tree)), cwd: h.cwd, sessionId: session.id }
    const logged: Harness = { ...sh, logs: [] }
    await callTool(logged, 'read', { path: 'code.ts' })
    for (const l of logged.logs) session.append(l.type, l.data, { ignorable: l.ignorable })
    // A fresh files plugin (as after a restart) knows nothing but the session log.
    expect(tree.registry.delete(filesPlugin)).toBeTruthy()
    await tree.plugin(filesPlugin, {})
    writeFileSync(file('code.ts'), 'const a = 1\nconst b = 2\nconst a2 = 1\n// more\n')
    expect((await callTool(sh, 'edit', { path: 'code.ts', old_string: '// more', new_string: '// x' })).text).toContain('changed on disk')
  })

  it('refuses argument mixes and binary files', async () => {
    expect((await callTool(h, 'edit', { path: 'code.ts', old_string: 'a', new_string: 'b', edits: [{ old_string: 'a', new_string: 'b' }] })).text)
      .toBe('Error: Give either old_string/new_string or edits, not both.')
    expect((await callTool(h, 'edit', { path: 'code.ts', old_string: 'a' })).text).toBe('Error: Give old_string and new_string (or an edits array).')
    expect((await callTool(h, 'edit', { path: 'nope.ts', old_string: 'a', new_string: 'b' })).text).toBe('Error: nope.ts does not exist. To create it use write.')
    writeFileSync(file('bin'), Buffer.from([1, 0, 2]))
    expect((await callTool(h, 'edit', { path: 'bin', old_string: 'a', new_string: 'b' })).text).toBe('Error: bin is a binary file; edit only changes text.')
  })
})

describe('applyEdits', () => {
  it('falls back to CRLF line ends', () => {
    expect(applyEdits('a\r\nb\r\n', [{ old_string: 'a\nb', new_string: 'x\ny' }])).toEqual({ text: 'x\r\ny\r\n', replacements: [1] })
  })
})

describe('ls', () => {
  it('lists a directory with type suffixes', async () => {
    mkdirSync(file('sub'))
    writeFileSync(file('b.txt'), '')
    writeFileSync(file('.hidden'), '')
    symlinkSync('b.txt', file('l'))
    const r = await callTool(h, 'ls', {})
    expect(r.text).toBe('.:\n.hidden\nb.txt\nl@\nsub/')
    expect((await callTool(h, 'ls', { path: 'sub' })).text).toBe('sub is empty.')
    expect((await callTool(h, 'ls', { path: 'b.txt' })).text).toBe('Error: b.txt is not a directory; use read for files.')
  })
})
