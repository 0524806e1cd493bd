import type { Context } from '@deepseek-ai/cordis'
import { formatError } from '@dsh/protocol'
import { z } from 'zod'
import { runHeadless } from '../runner.js'

export const name = 'headless'
export const inject = ['launcher', 'host']
export const Config = z.object({}).default({})

/** Claims the process, runs one task, exits with its code. */
export function apply(ctx: Context): void {
  const release = ctx.launcher.hold()
  runHeadless(ctx).then((code) => {
    release()
    ctx.launcher.exit(code)
  }, (error: unknown) => {
    ctx.launcher.stderr.write(formatError(error) + '\n')
    release()
    ctx.launcher.exit(1)
  })
}
