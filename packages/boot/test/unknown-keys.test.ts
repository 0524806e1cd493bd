import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { unknownKeys } from '../src/mount/mounter.js'

describe('unknownKeys', () => {
  const Config = z.object({
    model: z.string().optional(),
    limits: z.object({ maxSteps: z.number() }).optional(),
    servers: z.record(z.string(), z.object({ command: z.string() })).default({}),
  }).default({ servers: {} })

  it('names a key the schema would silently strip, nested ones too, with a suggestion', () => {
    expect(unknownKeys(Config, { modle: 'x', limits: { maxStep: 3 } })).toEqual([
      { message: 'unknown key (did you mean "model"?); known keys: model, limits, servers', path: ['modle'] },
      { message: 'unknown key (did you mean "maxSteps"?); known keys: maxSteps', path: ['limits', 'maxStep'] },
    ])
    expect(unknownKeys(Config, { unrelated: 1 })[0]!.message).toBe('unknown key; known keys: model, limits, servers')
  })

  it('accepts known keys, records, and objects that declare their own catchall', () => {
    expect(unknownKeys(Config, { model: 'm', limits: { maxSteps: 2 }, servers: { a: { command: 'x' } } })).toEqual([])
    expect(unknownKeys(z.looseObject({ a: z.string() }), { b: 1 })).toEqual([])
    expect(unknownKeys(z.strictObject({ a: z.string() }), { b: 1 })).toEqual([])
    expect(unknownKeys(undefined, { b: 1 })).toEqual([])
  })
})
