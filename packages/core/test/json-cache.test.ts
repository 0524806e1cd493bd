import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FrozenJsonCache, joinJsonObject } from '@dsh/core'

describe('joinJsonObject', () => {
  it('is JSON.stringify of the object built whole, empty parts included', () => {
    const members = fc.dictionary(fc.string({ unit: 'binary', maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
    fc.assert(fc.property(members, fc.string({ unit: 'binary', maxLength: 8 }), fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }), members, (before, key, items, after) => {
      fc.pre(!(key in before) && !(key in after) && Object.keys(before).every((k) => !(k in after)))
      const whole = { ...before, [key]: items, ...after }
      expect(joinJsonObject(before, key, items.map((v) => JSON.stringify(v)), after)).toBe(JSON.stringify(whole))
    }), { numRuns: 300 })
  })
})

describe('FrozenJsonCache', () => {
  it('builds a frozen key once, an unfrozen key every time; undefined is the empty text', () => {
    const cache = new FrozenJsonCache<{ n: number }>()
    let builds = 0
    const build = (k: { n: number }): unknown => (builds++, k.n < 0 ? undefined : { n: k.n })
    const frozen = Object.freeze({ n: 1 })
    const open = { n: 2 }
    expect([cache.text(frozen, build), cache.text(frozen, build)]).toEqual(['{"n":1}', '{"n":1}'])
    expect(builds).toBe(1)
    expect(cache.text(open, build)).toBe('{"n":2}')
    open.n = 3
    expect(cache.text(open, build)).toBe('{"n":3}')
    expect(builds).toBe(3)
    expect(cache.text(Object.freeze({ n: -1 }), build)).toBe('')
  })
})
