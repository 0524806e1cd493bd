import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { jsonEqual } from '../src/agent/json-equal.js'

const byText = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** A copy with one leaf changed, or the keys of one object reversed (both change the JSON text). */
function perturb(value: unknown, pick: number): unknown {
  if (Array.isArray(value)) return value.length ? value.map((v, i) => (i === pick % value.length ? perturb(v, pick >> 1) : v)) : [0]
  if (value && typeof value === 'object') {
    const entries = Object.entries(value)
    if (entries.length === 0) return { x: 1 }
    if (pick % 3 === 0 && entries.length > 1) return Object.fromEntries(entries.reverse())
    const k = pick % entries.length
    return Object.fromEntries(entries.map(([key, v], i) => [key, i === k ? perturb(v, pick >> 1) : v]))
  }
  return typeof value === 'string' ? `${value}!` : typeof value === 'number' ? value + 1 : value === null ? 0 : !value
}

describe('jsonEqual (the request header comparison)', () => {
  it('agrees with comparing the JSON texts: copies, perturbed copies and unrelated values', () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 4 }), fc.jsonValue({ maxDepth: 4 }), fc.nat(), (a, b, pick) => {
      const copy = structuredClone(a)
      const changed = perturb(a, pick)
      expect(jsonEqual(a, copy)).toBe(true)
      expect(jsonEqual(a, changed)).toBe(byText(a, changed))
      expect(jsonEqual(a, b)).toBe(byText(a, b))
    }), { numRuns: 500 })
  })

  it('treats undefined members as absent and undefined array slots as null, as JSON does; key order counts', () => {
    expect(jsonEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true)
    expect(jsonEqual([undefined], [null])).toBe(true)
    expect(jsonEqual({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false)
    expect(jsonEqual({ a: [1, { c: 'x' }] }, { a: [1, { c: 'y' }] })).toBe(false)
    expect(jsonEqual([1, 2], { 0: 1, 1: 2 })).toBe(false)
    expect(jsonEqual(-0, 0)).toBe(true)
    expect(jsonEqual('1', 1)).toBe(false)
  })
})
