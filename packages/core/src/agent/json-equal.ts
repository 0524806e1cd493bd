/**
 * Pure: `JSON.stringify(a) === JSON.stringify(b)` for plain JSON values (objects, arrays,
 * strings, finite numbers, booleans, null; `undefined` object members count as absent, as
 * in JSON), without building either text: key order matters, as it does in the text.
 * Stops at the first difference and at shared references.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return typeof a === 'number' && typeof b === 'number' ? JSON.stringify(a) === JSON.stringify(b) : false
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const other = b as unknown[]
    if (a.length !== other.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEqual(slot(a[i]), slot(other[i]))) return false
    return true
  }
  const ka = definedKeys(a as Record<string, unknown>)
  const kb = definedKeys(b as Record<string, unknown>)
  if (ka.length !== kb.length) return false
  for (let i = 0; i < ka.length; i++) {
    if (ka[i] !== kb[i]) return false
    if (!jsonEqual((a as Record<string, unknown>)[ka[i]!], (b as Record<string, unknown>)[kb[i]!])) return false
  }
  return true
}

/** An array slot as JSON writes it: `undefined` becomes null. */
function slot(value: unknown): unknown {
  return value === undefined ? null : value
}

function definedKeys(value: Record<string, unknown>): string[] {
  return Object.keys(value).filter((k) => value[k] !== undefined)
}
