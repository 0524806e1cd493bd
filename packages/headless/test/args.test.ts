import { describe, expect, it } from 'vitest'
import { parseHeadlessArgs } from '../src/args.js'

describe('parseHeadlessArgs', () => {
  it('reads flags and the task', () => {
    expect(parseHeadlessArgs(['--provider', 'anthropic', '--model', 'm', '--json', '--max-tokens', '100', 'do it'])).toEqual({
      task: 'do it', fromStdin: false, json: true, help: false, provider: 'anthropic', model: 'm', maxTokens: 100,
    })
    expect(parseHeadlessArgs(['-'])).toMatchObject({ task: undefined, fromStdin: true })
  })

  it('takes DSH_* defaults from the environment, and a flag wins over them', () => {
    const env = { DSH_PERMISSION_MODE: 'read-only', DSH_MODEL: 'env-model', DSH_REASONING_EFFORT: 'high' }
    expect(parseHeadlessArgs(['task'], env)).toMatchObject({ permissionMode: 'read-only', model: 'env-model', reasoningEffort: 'high' })
    expect(parseHeadlessArgs(['--model', 'flag-model', 'task'], env)).toMatchObject({ model: 'flag-model' })
  })

  it('names what was wrong', () => {
    expect(() => parseHeadlessArgs(['--max-tokens', 'x', 't'])).toThrow('--max-tokens must be a positive integer, got "x"')
    // a bad value from the environment names the variable, not the flag
    expect(() => parseHeadlessArgs(['t'], { DSH_REASONING_EFFORT: 'huge' })).toThrow('DSH_REASONING_EFFORT must be one of off, low, medium, high, max, got "huge"')
    expect(() => parseHeadlessArgs(['t'], { DSH_PERMISSION_MODE: 'bogus' })).toThrow('DSH_PERMISSION_MODE must be one of read-only, workspace-write, danger-full-access, got "bogus"')
    expect(() => parseHeadlessArgs(['--permission-mode', 'bogus', 't'], { DSH_PERMISSION_MODE: 'read-only' })).toThrow('--permission-mode must be one of')
    expect(parseHeadlessArgs(['--max-tokens', '5', 't'], { DSH_MAX_TOKENS: 'x' })).toMatchObject({ maxTokens: 5 })
    expect(() => parseHeadlessArgs(['a', 'b'])).toThrow('expected one task argument, got 2')
    expect(() => parseHeadlessArgs(['--permission-mode', 'yolo', 't'])).toThrow('--permission-mode must be one of read-only, workspace-write, danger-full-access, got "yolo"')
    expect(() => parseHeadlessArgs(['--bogus', 't'])).toThrow(/Unknown option '--bogus'/)
  })
})
