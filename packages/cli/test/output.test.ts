import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { installLogExporter } from '../src/output.js'

/** A real cordis logger with the launcher's exporter, writing into a string. */
function logTo(debug = false): { ctx: Context; text: () => string } {
  const ctx = new Context()
  let out = ''
  installLogExporter(ctx, { stderr: { write: (chunk: string) => { out += chunk; return true } } as never, debug })
  return { ctx, text: () => out }
}

describe('the launcher log exporter', () => {
  it('fills %s and %d placeholders instead of printing them with the arguments after', () => {
    const { ctx, text } = logTo()
    ctx.logger('persistence').warn('skipping %s in the session list: %s', '/s/x.jsonl', new Error('EACCES: permission denied'))
    ctx.logger('mcp').warn('%d servers, %s', 2, 'one failed')
    expect(text()).toBe('[persistence] skipping /s/x.jsonl in the session list: EACCES: permission denied\n[mcp] 2 servers, one failed\n')
  })

  it('appends what no placeholder took; objects as JSON; info is hidden unless debugging', () => {
    const { ctx, text } = logTo()
    ctx.logger('x').warn('plain', { a: 1 }, 3)
    ctx.logger('x').info('hidden %s', 'info')
    expect(text()).toBe('[x] plain {"a":1} 3\n')
    const debug = logTo(true)
    debug.ctx.logger('x').info('shown %s', 'info')
    expect(debug.text()).toBe('[x] shown info\n')
  })
})
