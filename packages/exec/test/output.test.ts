import { readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { buildEnv, isDeniedName, NON_INTERACTIVE } from '../src/shell/env.js'
import { OutputSink, UnreadBuffer } from '../src/shell/output.js'
import { cleanupDirs, tempDir } from './helpers.js'

afterAll(cleanupDirs)

describe('OutputSink', () => {
  it('keeps small output whole and creates no file', () => {
    let asked = 0
    const sink = new OutputSink({ maxBytes: 100, maxLines: 10 }, () => { asked++; return '/nonexistent/never' })
    sink.write(Buffer.from('a\nb\n'))
    expect(sink.finish()).toEqual({ output: 'a\nb\n' })
    expect(asked).toBe(0)
  })

  it('cuts by lines, spilling the whole stream to a 0600 file', () => {
    const dir = tempDir('sink')
    const file = path.join(dir, 'out.log')
    const sink = new OutputSink({ maxBytes: 1000, maxLines: 3 }, () => file)
    const text = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join('')
    sink.write(Buffer.from(text))
    expect(sink.finish()).toEqual({
      output: 'line 8\nline 9\nline 10\n',
      truncation: { spillPath: file, totalBytes: text.length, totalLines: 10, shownLines: 3 },
    })
    expect(readFileSync(file, 'utf8')).toBe(text)
    expect(statSync(file).mode & 0o777).toBe(0o600)
  })

  it('caps the spill file so a runaway command cannot fill the disk', () => {
    const file = path.join(tempDir('sink-cap'), 'out.log')
    const sink = new OutputSink({ maxBytes: 10, maxLines: 100, maxSpillBytes: 50 }, () => file)
    for (let i = 0; i < 20; i++) sink.write(Buffer.from('0123456789'))
    expect(sink.finish()).toMatchObject({ output: '0123456789', truncation: { spillPath: file, totalBytes: 200 } })
    expect(readFileSync(file, 'utf8')).toBe('0123456789'.repeat(5) + '\n[dsh: output file capped at 50 bytes; the rest was not saved]\n')
  })

  it('cuts by bytes at a line boundary and never splits a UTF-8 character', () => {
    const dir = tempDir('sink')
    const file = path.join(dir, 'out.log')
    const sink = new OutputSink({ maxBytes: 20, maxLines: 100 }, () => file)
    const text = 'ééééééééééééééé\n'.repeat(4) + 'end'
    for (const byte of Buffer.from(text)) sink.write(Buffer.from([byte]))
    const { output, truncation } = sink.finish()
    expect(output).toBe('end')
    expect(truncation).toEqual({ spillPath: file, totalBytes: Buffer.byteLength(text), totalLines: 5, shownLines: 1 })
    expect(readFileSync(file, 'utf8')).toBe(text)
  })

  it('keeps the tail of one endless line', () => {
    const sink = new OutputSink({ maxBytes: 8, maxLines: 100 }, () => path.join(tempDir('sink'), 'o.log'))
    sink.write(Buffer.from('x'.repeat(50) + 'abcdefgh'))
    expect(sink.finish().output).toBe('abcdefgh')
  })
})

describe('UnreadBuffer', () => {
  it('hands out what arrived since the last read, dropping the oldest beyond the cap', () => {
    const unread = new UnreadBuffer(4)
    unread.write(Buffer.from('ab'))
    expect(unread.take()).toEqual({ text: 'ab', dropped: 0 })
    unread.write(Buffer.from('cdefghij'))
    unread.write(Buffer.from('k'))
    expect(unread.take()).toEqual({ text: 'hijk', dropped: 5 })
    expect(unread.take()).toEqual({ text: '', dropped: 0 })
  })
})

describe('buildEnv', () => {
  it('drops secret-looking names and DSH_ internals, sets non-interactive settings and TMPDIR', () => {
    const env = buildEnv({
      PATH: '/usr/bin', HOME: '/root', OPENAI_API_KEY: 'sk', GITHUB_TOKEN: 't', DB_PASSWORD: 'p', AWS_SECRET_ACCESS_KEY: 's',
      SSH_AUTH_SOCK: '/s', DSH_HOME: '/d', BASH_ENV: '/evil', FORCE_COLOR: '1', MY_CREDENTIALS: 'c', LANG: 'C.UTF-8',
      PAGER: 'less', KEEP_TOKEN_COUNT: '1', PRIVATE_THING: 'x', EXTRA_BAD: 'y',
    }, '/tmp/session', { allow: ['KEEP_TOKEN_COUNT'], deny: ['^extra_'] }, { ADDED: '1' })
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/root', LANG: 'C.UTF-8', KEEP_TOKEN_COUNT: '1', ...NON_INTERACTIVE, TMPDIR: '/tmp/session', ADDED: '1' })
    expect(isDeniedName('dsh_anything')).toBe(true)
    expect(isDeniedName('TERM')).toBe(false)
  })
})
