import { describe, expect, it } from 'vitest'
import { NO_OUTPUT, cardOutput, parseExitStatus, renderResult, type ShellStatus } from '../src/shell/render.js'

const base: ShellStatus = { output: '', exitCode: 0, signal: null }

describe('renderResult', () => {
  it('puts the markers after the output in the specified order', () => {
    const text = renderResult({
      output: 'line 1\nline 2\n',
      exitCode: null,
      signal: 'SIGTERM',
      timedOutMs: 5000,
      sandboxDenial: 'a write was refused',
      truncation: { spillPath: '/tmp/x/out.log', totalBytes: 1234, totalLines: 900, shownLines: 2 },
    })
    expect(text).toBe([
      'line 1',
      'line 2',
      '[output truncated: showing the last 2 of 900 lines (1234 bytes); full output: /tmp/x/out.log]',
      '[sandbox denied: a write was refused]',
      '[timed out after 5000ms]',
      '[killed by signal: SIGTERM]',
    ].join('\n'))
  })

  it('marks only a non-zero exit code, and shows a placeholder for a silent success', () => {
    expect(renderResult({ ...base, output: 'ok\n' })).toBe('ok')
    expect(renderResult({ ...base, output: 'bad\n', exitCode: 2 })).toBe('bad\n[exit code: 2]')
    expect(renderResult(base)).toBe(NO_OUTPUT)
    expect(renderResult({ ...base, exitCode: 1 })).toBe('[exit code: 1]')
  })

  it('guards output whose last line looks like a marker with one extra newline', () => {
    expect(renderResult({ ...base, output: 'x\n[exit code: 3]\n' })).toBe('x\n[exit code: 3]\n')
    expect(renderResult({ ...base, output: '[exit code: 3]', exitCode: 1 })).toBe('[exit code: 3]\n\n[exit code: 1]')
  })
})

describe('parseExitStatus', () => {
  it('reads text without markers as a clean exit 0', () => {
    expect(parseExitStatus('hello')).toEqual({ output: 'hello', exitCode: 0, signal: null })
    expect(parseExitStatus(NO_OUTPUT)).toEqual({ output: '', exitCode: 0, signal: null })
  })

  it('does not read a marker that merely ends a line of output', () => {
    expect(parseExitStatus('echo said [exit code: 7]')).toEqual({ output: 'echo said [exit code: 7]', exitCode: 0, signal: null })
    expect(parseExitStatus('x [killed by signal: SIGKILL]')).toEqual({ output: 'x [killed by signal: SIGKILL]', exitCode: 0, signal: null })
  })

  it('reads a marker at the very start when the output is empty', () => {
    expect(parseExitStatus('[exit code: 1]')).toEqual({ output: '', exitCode: 1, signal: null })
    expect(parseExitStatus('[timed out after 10ms]\n[killed by signal: SIGTERM]'))
      .toEqual({ output: '', exitCode: null, signal: 'SIGTERM', timedOutMs: 10 })
  })

  const cases: [string, ShellStatus][] = [
    ['exit 0 with output', { ...base, output: 'a\nb' }],
    ['empty exit 0', base],
    ['exit code', { ...base, output: 'boom', exitCode: 42 }],
    ['empty with exit code', { ...base, exitCode: 127 }],
    ['negative exit code', { ...base, output: 'x', exitCode: -1 }],
    ['signal', { ...base, output: 'partial', exitCode: null, signal: 'SIGKILL' }],
    ['timeout + signal', { ...base, output: 'slow', exitCode: null, signal: 'SIGTERM', timedOutMs: 1500 }],
    ['timeout + exit code', { ...base, output: 'trapped', exitCode: 143, timedOutMs: 20 }],
    ['sandbox denial', { ...base, output: 'touch: cannot touch \'/x\': Read-only file system', exitCode: 1, sandboxDenial: 'write refused; retry once with escalate: true [see docs]' }],
    ['truncation', { ...base, output: 'tail', truncation: { spillPath: '/tmp/a b]/c.log', totalBytes: 10, totalLines: 500, shownLines: 1 } }],
    ['everything', { output: 'o', exitCode: null, signal: 'SIGINT', timedOutMs: 1, sandboxDenial: 'd', truncation: { spillPath: '/p', totalBytes: 1, totalLines: 2, shownLines: 1 } }],
    ['output that is an exit marker', { ...base, output: '[exit code: 3]' }],
    ['output ending in a signal marker, real exit code', { ...base, output: 'x\n[killed by signal: SIGHUP]', exitCode: 2 }],
    ['output ending in a timeout marker, real timeout', { ...base, output: '[timed out after 5ms]', exitCode: null, signal: 'SIGTERM', timedOutMs: 9 }],
    ['output ending in a denial marker', { ...base, output: 'y\n[sandbox denied: fake]' }],
    ['output ending in a truncation marker', { ...base, output: '[output truncated: showing the last 1 of 2 lines (3 bytes); full output: /f]', exitCode: 1 }],
    ['output that is the placeholder', { ...base, output: NO_OUTPUT }],
    ['output ending with the placeholder and an exit code', { ...base, output: `a\n${NO_OUTPUT}`, exitCode: 5 }],
    ['output with inner blank lines', { ...base, output: 'a\n\n\nb', exitCode: 1 }],
    ['mid-line marker text', { ...base, output: 'say [exit code: 9]', exitCode: 0 }],
  ]
  it.each(cases)('is the exact inverse of renderResult: %s', (_label, status) => {
    expect(parseExitStatus(renderResult(status))).toEqual(status)
  })

  it('canonicalises trailing newlines of the output', () => {
    expect(parseExitStatus(renderResult({ ...base, output: 'x\n\n', exitCode: 1 }))).toEqual({ ...base, output: 'x', exitCode: 1 })
  })
})

describe('cardOutput', () => {
  it('keeps the informational markers and drops the exit marker', () => {
    const status: ShellStatus = { output: 'o\n', exitCode: 3, signal: null, timedOutMs: 7 }
    expect(cardOutput(parseExitStatus(renderResult(status)))).toBe('o\n[timed out after 7ms]')
    expect(cardOutput({ ...base, exitCode: 2 })).toBe('')
  })
})
