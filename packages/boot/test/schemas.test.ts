import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { interpretSchemas } from '../src/index.js'

describe('interpretSchemas', () => {
  it('turns the object fast path off process-wide; parsing and its errors are unchanged', () => {
    const Row = z.strictObject({ id: z.string().min(1), n: z.number().int().optional(), nested: z.object({ on: z.boolean() }) })
    const before = [Row.safeParse({ id: 'a', nested: { on: true } }), Row.safeParse({ id: '', extra: 1, nested: {} })]
    const saved = z.config().jitless
    try {
      interpretSchemas()
      expect(z.config().jitless).toBe(true)
      const Fresh = z.strictObject({ id: z.string().min(1), n: z.number().int().optional(), nested: z.object({ on: z.boolean() }) })
      const after = [Fresh.safeParse({ id: 'a', nested: { on: true } }), Fresh.safeParse({ id: '', extra: 1, nested: {} })]
      expect(after[0]).toEqual(before[0])
      expect(after[1]!.error?.issues).toEqual(before[1]!.error?.issues)
    } finally {
      z.config({ jitless: saved })
    }
  })
})
