import { ToolError } from '@dsh/core'
import { numberLine, plural } from '../text.js'

export interface EditSpec {
  old_string: string
  new_string: string
  replace_all?: boolean | undefined
}

export interface EditOutcome {
  text: string
  /** Replacements made by each edit. */
  replacements: number[]
}

function occurrences(text: string, needle: string): number[] {
  const at: number[] = []
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) at.push(i)
  return at
}

function lineAt(text: string, index: number): number {
  let line = 1
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++
  return line
}

/** Numbered lines [from-2, to+2] of `text`, at most 12. */
function context(lines: string[], from: number, to: number): string {
  const start = Math.max(1, from - 2)
  const end = Math.min(lines.length, to + 2, start + 11)
  const out: string[] = []
  for (let n = start; n <= end; n++) out.push(numberLine(n, lines[n - 1]!))
  return out.join('\n')
}

function notFound(text: string, spec: EditSpec, label: string): ToolError {
  const lines = text.split('\n')
  const probe = spec.old_string.split('\n').map((l) => l.trim()).find((l) => l.length > 0)
  const hits: number[] = []
  if (probe) lines.forEach((l, i) => { if (l.trim() === probe || (probe.length >= 8 && l.includes(probe))) hits.push(i + 1) })
  let hint = 'Read the file again and copy old_string exactly, including whitespace and indentation.'
  if (hits.length > 0) {
    hint = `Its first line ("${probe}") appears at ${hits.length === 1 ? 'line' : 'lines'} ${hits.slice(0, 5).join(', ')}, `
      + `so the rest differs (whitespace, indentation or later lines). The file there reads:\n${hits.slice(0, 2).map((n) => context(lines, n, n + spec.old_string.split('\n').length - 1)).join('\n…\n')}`
  }
  return new ToolError(`${label}old_string was not found. ${hint}`)
}

function ambiguous(text: string, at: number[], spec: EditSpec, label: string): ToolError {
  const lines = text.split('\n')
  const span = spec.old_string.split('\n').length - 1
  const where = at.map((i) => lineAt(text, i))
  return new ToolError(`${label}old_string matches ${at.length} times (at lines ${where.slice(0, 10).join(', ')}${where.length > 10 ? ', …' : ''}). `
    + 'Include more surrounding lines in old_string so it matches exactly once, or set replace_all: true to replace every match.\n'
    + where.slice(0, 3).map((n) => context(lines, n, n + span)).join('\n…\n'))
}

/**
 * Applies `edits` in order, each to the result of the previous ones; all or nothing (a
 * failure throws a ToolError naming the edit and helping fix it, and nothing is
 * written). Each old_string must match exactly once unless replace_all. When the file
 * uses CRLF and old_string has bare LFs, the edit is retried with CRLF line ends.
 */
export function applyEdits(original: string, edits: readonly EditSpec[]): EditOutcome {
  let text = original
  const replacements: number[] = []
  edits.forEach((edit, i) => {
    const label = edits.length > 1 ? `Edit ${i + 1} of ${edits.length} (no edit was applied): ` : ''
    if (edit.old_string === '') throw new ToolError(`${label}old_string is empty. To create or replace a whole file use write.`)
    if (edit.old_string === edit.new_string) throw new ToolError(`${label}old_string and new_string are identical; nothing would change.`)
    let spec = edit
    let at = occurrences(text, spec.old_string)
    if (at.length === 0 && text.includes('\r\n') && !spec.old_string.includes('\r')) {
      const crlf = { ...edit, old_string: edit.old_string.replace(/\n/g, '\r\n'), new_string: edit.new_string.replace(/\n/g, '\r\n') }
      const again = occurrences(text, crlf.old_string)
      if (again.length > 0) [spec, at] = [crlf, again]
    }
    if (at.length === 0) throw notFound(text, spec, label)
    if (at.length > 1 && !spec.replace_all) throw ambiguous(text, at, spec, label)
    text = spec.replace_all
      ? text.split(spec.old_string).join(spec.new_string)
      : text.slice(0, at[0]) + spec.new_string + text.slice(at[0]! + spec.old_string.length)
    replacements.push(at.length)
  })
  return { text, replacements }
}

export function describeEdits(shown: string, replacements: number[]): string {
  const total = replacements.reduce((a, b) => a + b, 0)
  return replacements.length > 1
    ? `Edited ${shown}: ${plural(replacements.length, 'edit')}, ${plural(total, 'replacement')}.`
    : `Edited ${shown}: ${plural(total, 'replacement')}.`
}
