import { describe, expect, it, vi } from 'vitest'
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

  it('builds an entry on first access and keeps it (0095); keys stay own and enumerable', async () => {
    vi.resetModules()
    const fresh = await import('../src/methods.js')
    const before = Object.getOwnPropertyDescriptor(fresh.METHODS, 'session/export')
    expect(before?.get).toBeTypeOf('function') // not built by loading the module
    expect(before?.enumerable).toBe(true)
    const entry = fresh.METHODS['session/export']
    expect(entry.params.safeParse({ sessionId: 's' }).success).toBe(true)
    expect(fresh.METHODS['session/export']).toBe(entry)
    expect(Object.getOwnPropertyDescriptor(fresh.METHODS, 'session/export')).toMatchObject({ value: entry, writable: false })
    expect(Object.hasOwn(fresh.METHODS, 'session/export')).toBe(true)
    expect(Object.keys(fresh.METHODS)).toEqual(Object.keys(METHODS))
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
