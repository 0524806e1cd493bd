/**
 * Composition vocabulary. A row is one plugin mount; a patch file is a list of
 * entries that insert rows or replace named keys of an existing row.
 */

/** One plugin mount. `name` is a module specifier (package subpath or `./relative.js`). */
export interface Row {
  id: string
  name: string
  config?: unknown
  disabled?: boolean
  group?: string
  /** A row that may fail to load without stopping the run (its failure is reported). */
  optional?: boolean
}

/** The keys a `- id: X` entry may replace (wholesale, no deep merge). */
export type RowKey = 'name' | 'config' | 'disabled' | 'group' | 'optional'
export const ROW_KEYS: readonly RowKey[] = ['name', 'config', 'disabled', 'group', 'optional']

/** One patch file's text and where it came from. `label` says which layer it is (e.g. `bundle @dsh/bundle-base`). */
export interface PatchSource {
  file: string
  text: string
  label?: string
}

/**
 * A parsed patch entry. `index` is the entry's 0-based position in the file's
 * list and `line` its 1-based line, for error messages.
 */
export type PatchEntry =
  | { type: 'insert'; index: number; line: number; rows: { row: Row; line: number }[] }
  | { type: 'replace'; index: number; line: number; id: string; set: RowPatch }

/** Keys set by a replacement; `null` in YAML means "remove this key" (not allowed for `name`). */
export type RowPatch = { name?: string; config?: unknown; disabled?: boolean | null; group?: string | null; optional?: boolean | null }

/** Which file changed which keys of a row. */
export interface RowChange {
  file: string
  keys: RowKey[]
}

/**
 * An effective row with its provenance: the file that inserted it, every later
 * file that replaced keys of it (in layer order), and the file whose directory a
 * relative `name` resolves against (the last file that set `name`).
 */
export interface ComposedRow {
  row: Row
  insertedBy: string
  changes: RowChange[]
  nameFrom: string
}

export interface Composition {
  rows: ComposedRow[]
  layers: { file: string; label?: string }[]
}
