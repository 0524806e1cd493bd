import { dirname, resolve } from 'node:path'
import { yaml } from './yaml.js'
import type { ComposedRow, Composition, Row } from './types.js'

/** Config keys whose values never appear in a dump. */
const SECRET_KEY = /^(api[-_]?key|apikey|secret|client[-_]?secret|password|passwd|token|access[-_]?token|auth[-_]?token|bearer|authorization)$/i
export const REDACTED = '<redacted>'

/**
 * Renders a composition as one loadable patch file: a single `- insert:` of every
 * effective row (disabled ones included, with `disabled: true`), each preceded by
 * a comment naming the file that inserted it and the files that changed it (with
 * the keys). Relative row names are made absolute so the dump loads from anywhere;
 * secret-looking config values are replaced by `<redacted>`. Pure.
 */
export function dumpComposition(composition: Composition, header: readonly string[] = []): string {
  const labels = new Map(composition.layers.map((l) => [l.file, l.label]))
  const show = (file: string) => (labels.get(file) ? `${file} (${labels.get(file)})` : file)
  const { Document, isMap, isSeq } = yaml()
  const rows = composition.rows.map(dumpRow)
  const doc = new Document(rows.length ? [{ insert: rows }] : [])
  const layerLines = composition.layers.length
    ? ['layers, in order (later wins):', ...composition.layers.map((l, i) => `  ${i + 1}. ${show(l.file)}`)]
    : ['no layers']
  doc.commentBefore = [...header, ...layerLines].map((l) => ` ${l}`).join('\n')
  const list = doc.contents
  if (isSeq(list) && isMap(list.items[0])) {
    const insert = list.items[0].get('insert', true)
    if (isSeq(insert)) {
      insert.items.forEach((node, i) => {
        const row = composition.rows[i]
        if (!row || !node || typeof node !== 'object') return
        ;(node as { commentBefore?: string }).commentBefore = provenance(row, show).map((l) => ` ${l}`).join('\n')
      })
    }
  }
  return doc.toString({ lineWidth: 0 })
}

/** The provenance comment lines of one row. */
export function provenance(row: ComposedRow, show: (file: string) => string = (f) => f): string[] {
  return [`inserted by ${show(row.insertedBy)}`, ...row.changes.map((c) => `changed by ${show(c.file)}: ${c.keys.join(', ')}`)]
}

/** A row's `name` made absolute when it is a relative path (resolved against the file that set it). */
export function absoluteName(row: ComposedRow): string {
  const { name } = row.row
  if (name.startsWith('./') || name.startsWith('../')) return resolve(dirname(row.nameFrom), name)
  return name
}

function dumpRow(row: ComposedRow): Row {
  const out: Row = { id: row.row.id, name: absoluteName(row) }
  if (row.row.config !== undefined) out.config = redactSecrets(row.row.config)
  if (row.row.disabled !== undefined) out.disabled = row.row.disabled
  if (row.row.group !== undefined) out.group = row.row.group
  if (row.row.optional !== undefined) out.optional = row.row.optional
  return out
}

/** A deep copy of `value` with every secret-looking key's value replaced by `<redacted>`. */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets)
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_KEY.test(k) && v !== null && v !== undefined ? REDACTED : redactSecrets(v)]))
  }
  return value
}
