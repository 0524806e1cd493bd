import type { YAMLMap } from 'yaml'
import { DshError } from '@dsh/protocol'
import { lineOf, parseYaml, yaml } from './yaml.js'
import { ROW_KEYS, type PatchEntry, type PatchSource, type Row, type RowPatch } from './types.js'

/**
 * Parses one patch file: a YAML list whose entries are either
 * `- insert: [rows]` or `- id: X` plus the keys to replace. Pure; every error is a
 * DshError naming the file, the line, and the row/key at fault:
 * PATCH_SYNTAX (YAML), PATCH_INVALID (shape).
 */
export function parsePatch(source: PatchSource): PatchEntry[] {
  const { file } = source
  const { isMap, isSeq, isScalar } = yaml()
  const { doc, lines } = parseYaml(source.text, file, 'PATCH_SYNTAX')
  const contents = doc.contents
  if (contents === null || (isScalar(contents) && contents.value === null)) return []
  if (!isSeq(contents)) throw invalid(file, lineOf(lines, contents), 'a patch file must be a YAML list of `- insert: [...]` and `- id: ...` entries')
  const js = doc.toJS() as unknown[]
  const entries: PatchEntry[] = []
  contents.items.forEach((item, index) => {
    const line = lineOf(lines, item)
    if (!isMap(item)) throw invalid(file, line, `entry ${index + 1} must be a mapping with \`insert\` or \`id\``)
    const value = js[index] as Record<string, unknown>
    if ('insert' in value) {
      const extra = Object.keys(value).filter((k) => k !== 'insert')
      if (extra.length) throw invalid(file, line, `entry ${index + 1}: an \`insert\` entry takes no other key (found ${extra.map(q).join(', ')})`)
      const list = (item as YAMLMap).get('insert', true)
      if (!isSeq(list)) throw invalid(file, line, `entry ${index + 1}: \`insert\` must be a list of rows`)
      const values = value.insert as unknown[]
      const rows = list.items.map((node, i) => {
        const rowLine = lineOf(lines, node) || line
        return { row: checkRow(file, rowLine, values[i]), line: rowLine }
      })
      entries.push({ type: 'insert', index, line, rows })
    } else if ('id' in value) {
      entries.push({ type: 'replace', index, line, ...checkReplace(file, line, index, value) })
    } else {
      throw invalid(file, line, `entry ${index + 1} must have \`insert\` or \`id\` (found ${Object.keys(value).map(q).join(', ') || 'no key'})`)
    }
  })
  return entries
}

/** This module's URL: its build identity keys the parse cache (see layers.ts). */
export const PATCH_PARSER_URL = import.meta.url

function checkRow(file: string, line: number, value: unknown): Row {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(file, line, 'a row must be a mapping with `id` and `name`')
  const raw = value as Record<string, unknown>
  const id = raw.id
  if (typeof id !== 'string' || id === '') throw invalid(file, line, `row without an \`id\`${typeof raw.name === 'string' ? ` (name ${q(raw.name)})` : ''}`, { key: 'id' })
  for (const key of Object.keys(raw)) {
    if (key !== 'id' && !(ROW_KEYS as readonly string[]).includes(key)) throw invalid(file, line, `row ${q(id)}: unknown key ${q(key)} (a row has id, name, config, disabled, group, optional)`, { row: id, key })
  }
  if (typeof raw.name !== 'string' || raw.name === '') throw invalid(file, line, `row ${q(id)}: \`name\` must be a module name (e.g. @dsh/core/tools)`, { row: id, key: 'name' })
  const row: Row = { id, name: raw.name }
  if (raw.config !== undefined && raw.config !== null) row.config = raw.config
  if (raw.disabled !== undefined && raw.disabled !== null) {
    if (typeof raw.disabled !== 'boolean') throw invalid(file, line, `row ${q(id)}: \`disabled\` must be true or false`, { row: id, key: 'disabled' })
    row.disabled = raw.disabled
  }
  if (raw.group !== undefined && raw.group !== null) {
    if (typeof raw.group !== 'string') throw invalid(file, line, `row ${q(id)}: \`group\` must be a string`, { row: id, key: 'group' })
    row.group = raw.group
  }
  if (raw.optional !== undefined && raw.optional !== null) {
    if (typeof raw.optional !== 'boolean') throw invalid(file, line, `row ${q(id)}: \`optional\` must be true or false`, { row: id, key: 'optional' })
    row.optional = raw.optional
  }
  return row
}

function checkReplace(file: string, line: number, index: number, raw: Record<string, unknown>): { id: string; set: RowPatch } {
  const id = raw.id
  if (typeof id !== 'string' || id === '') throw invalid(file, line, `entry ${index + 1}: \`id\` must be a non-empty string`, { key: 'id' })
  const keys = Object.keys(raw).filter((k) => k !== 'id')
  if (!keys.length) throw invalid(file, line, `entry ${index + 1}: \`- id: ${id}\` names no key to replace (give name, config, disabled, group or optional)`, { row: id })
  const set: RowPatch = {}
  for (const key of keys) {
    const v = raw[key]
    switch (key) {
      case 'name':
        if (typeof v !== 'string' || v === '') throw invalid(file, line, `row ${q(id)}: \`name\` must be a module name`, { row: id, key })
        set.name = v
        break
      case 'config':
        set.config = v ?? undefined
        break
      case 'disabled':
        if (typeof v !== 'boolean' && v !== null) throw invalid(file, line, `row ${q(id)}: \`disabled\` must be true or false`, { row: id, key })
        set.disabled = v
        break
      case 'group':
        if (typeof v !== 'string' && v !== null) throw invalid(file, line, `row ${q(id)}: \`group\` must be a string`, { row: id, key })
        set.group = v
        break
      case 'optional':
        if (typeof v !== 'boolean' && v !== null) throw invalid(file, line, `row ${q(id)}: \`optional\` must be true or false`, { row: id, key })
        set.optional = v
        break
      default:
        throw invalid(file, line, `row ${q(id)}: unknown key ${q(key)} (a replacement may set name, config, disabled, group, optional)`, { row: id, key })
    }
  }
  return { id, set }
}

function invalid(file: string, line: number, message: string, data: Record<string, unknown> = {}): DshError {
  return new DshError('PATCH_INVALID', `${file}${line ? `:${line}` : ''}: ${message}`, { data: { file, line, ...data } })
}

function q(s: unknown): string {
  return JSON.stringify(s)
}
