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
    expect(() => parseHeadlessArgs(['t'], { DSH_REASONING_EFFORT: 'huge' })).toThrow('--reasoning-effort must be one of off, low, medium, high, max, got "huge"')
    expect(() => parseHeadlessArgs(['a', 'b'])).toThrow('expected one task argument, got 2')
    expect(() => parseHeadlessArgs(['--permission-mode', 'yolo', 't'])).toThrow('--permission-mode must be one of read-only, workspace-write, danger-full-access, got "yolo"')
    expect(() => parseHeadlessArgs(['--bogus', 't'])).toThrow(/Unknown option '--bogus'/)
  })
})
