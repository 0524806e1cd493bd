import { DshError } from '@dsh/protocol'
import { parsePatch } from './patch.js'
import type { ComposedRow, Composition, PatchEntry, PatchSource, Row, RowKey } from './types.js'

/**
 * Applies patch files in order over an empty root and returns the effective rows
 * (in insertion order) with per-row provenance. Pure: no file system, no Context.
 *
 * Errors (DshError): PATCH_SYNTAX / PATCH_INVALID from parsing; ROW_DUPLICATE when
 * an insert reuses an id (names both files); ROW_UNKNOWN when a replacement names
 * an id no earlier entry inserted (names the file, the entry and the id).
 */
export function compose(sources: readonly PatchSource[]): Composition {
  return composeParsed(sources.map((source) => ({ source, entries: parsePatch(source) })))
}

/** Same as {@link compose} over already parsed files. */
export function composeParsed(files: readonly { source: PatchSource; entries: readonly PatchEntry[] }[]): Composition {
  const rows = new Map<string, ComposedRow>()
  for (const { source, entries } of files) {
    const { file } = source
    for (const entry of entries) {
      if (entry.type === 'insert') {
        for (const { row, line } of entry.rows) {
          const existing = rows.get(row.id)
          if (existing) {
            throw new DshError('ROW_DUPLICATE', `${file}:${line}: row ${q(row.id)} is already inserted by ${existing.insertedBy}`, {
              hint: `to change that row, replace its keys with \`- id: ${row.id}\` plus the keys (name, config, disabled, group, optional)`,
              data: { file, line, row: row.id, other: existing.insertedBy },
            })
          }
          rows.set(row.id, { row: cloneRow(row), insertedBy: file, changes: [], nameFrom: file })
        }
      } else {
        const target = rows.get(entry.id)
        if (!target) {
          throw new DshError('ROW_UNKNOWN', `${file}:${entry.line}: entry ${entry.index + 1} replaces row ${q(entry.id)}, but no earlier layer inserts a row with that id`, {
            hint: rows.size ? `known ids: ${[...rows.keys()].join(', ')}; to add a row use \`- insert: [{id, name}]\`` : 'to add a row use `- insert: [{id, name}]`',
            data: { file, line: entry.line, index: entry.index, row: entry.id },
          })
        }
        const keys: RowKey[] = []
        const { set } = entry
        if (set.name !== undefined) { target.row.name = set.name; target.nameFrom = file; keys.push('name') }
        if ('config' in set) {
          if (set.config === undefined) delete target.row.config
          else target.row.config = structuredClone(set.config)
          keys.push('config')
        }
        if ('disabled' in set) {
          if (set.disabled === null || set.disabled === undefined) delete target.row.disabled
          else target.row.disabled = set.disabled
          keys.push('disabled')
        }
        if ('group' in set) {
          if (set.group === null || set.group === undefined) delete target.row.group
          else target.row.group = set.group
          keys.push('group')
        }
        if ('optional' in set) {
          if (set.optional === null || set.optional === undefined) delete target.row.optional
          else target.row.optional = set.optional
          keys.push('optional')
        }
        const last = target.changes.at(-1)
        if (last && last.file === file) last.keys = [...new Set([...last.keys, ...keys])]
        else target.changes.push({ file, keys })
      }
    }
  }
  return {
    rows: [...rows.values()],
    layers: files.map(({ source }) => (source.label === undefined ? { file: source.file } : { file: source.file, label: source.label })),
  }
}

/** The files that produced or changed a row, in layer order, without repeats. */
export function rowFiles(row: ComposedRow): string[] {
  return [...new Set([row.insertedBy, ...row.changes.map((c) => c.file)])]
}

function cloneRow(row: Row): Row {
  return row.config === undefined ? { ...row } : { ...row, config: structuredClone(row.config) }
}

function q(s: string): string {
  return JSON.stringify(s)
}
