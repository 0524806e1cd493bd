import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { bashTool } from '../bash.js'
import { jobKillTool, jobOutputTool } from '../jobs.js'

/** bash, job_output and job_kill. Background jobs are owned by the session that started them and die with `ctx.shell`. */
export const name = '@dsh/tools-builtin/bash'
export const inject = ['tools', 'shell', 'fs']
export const Config = z.object({})
export type Config = z.output<typeof Config>

export function apply(ctx: Context, _config: Config): void {
  for (const tool of [bashTool, jobOutputTool, jobKillTool]) ctx.effect(() => ctx.tools.register(tool))
  // Unloading the tools stops the jobs they started (the shell stops the rest when it goes).
  const shell = ctx.shell
  ctx.effect(() => () => shell.killAll())
  // a session's background jobs end with it (an editor keeps the process for many sessions)
  ctx.on('session/closed', (session) => { void shell.killAll(session.id) })
}
