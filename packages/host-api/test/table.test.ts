import { describe, expect, it } from 'vitest'
import { CLIENT_REQUESTS, METHODS, describeRpc, issuesOf, quote } from '../src/index.js'

describe('the method table', () => {
  it('describes every method with JSON Schemas for params and result', () => {
    const described = describeRpc()
    expect(described.methods.map((m) => m.name).sort()).toEqual(Object.keys(METHODS).sort())
    expect(described.clientRequests.map((m) => m.name).sort()).toEqual(Object.keys(CLIENT_REQUESTS).sort())
    for (const m of described.methods) {
      expect(m.params, m.name).toMatchObject({ type: 'object' })
      expect(JSON.stringify(m.params)).not.toContain('$schema')
    }
  })

  it('names the field of invalid params and refuses unknown keys', () => {
    const bad = METHODS['session/create'].params.safeParse({ workspace: 'relative/dir', permisionMode: 'read-only' })
    expect(bad.success).toBe(false)
    const issues = issuesOf(bad.error!)
    expect(issues).toEqual(expect.arrayContaining([
      { path: 'params.workspace', message: 'must be an absolute path' },
      expect.objectContaining({ path: 'params', message: expect.stringContaining('permisionMode') }),
    ]))
  })

  it('accepts a prompt as text or as content parts, never empty', () => {
    const p = METHODS['session/prompt'].params
    expect(p.safeParse({ sessionId: 's', prompt: 'hi' }).success).toBe(true)
    expect(p.safeParse({ sessionId: 's', prompt: [{ type: 'text', text: 'hi' }], mode: 'steer' }).success).toBe(true)
    expect(p.safeParse({ sessionId: 's', prompt: '' }).success).toBe(false)
    expect(p.safeParse({ sessionId: 's', prompt: 'hi', mode: 'later' }).success).toBe(false)
  })

  it('quotes only a short prefix of hostile input', () => {
    const q = quote('x'.repeat(8 * 1024 * 1024))
    expect(q.length).toBeLessThan(120)
    expect(q).toContain('8388608 chars')
  })
})
