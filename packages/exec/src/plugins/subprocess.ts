import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { LocalSubprocess } from '../subprocess/local.js'
import { routed } from '../world.js'

export const name = '@dsh/exec/subprocess'
export const inject: string[] = []
export const Config = z.object({
  /** Between SIGTERM and SIGKILL to a process group. */
  killGraceMs: z.number().int().min(0).default(2000),
  shPath: z.string().default('/bin/sh'),
  /** Perl for the small long-lived spawner that forks each command (0080); '' = Node's spawn (forks all of dsh). */
  perlPath: z.string().default('perl'),
  /** Sandboxed commands of the same confinement share one long-lived sandbox (0092); false: one bubblewrap per command. */
  shareSandbox: z.boolean().default(true),
  /** Calls of one confinement in a row before its shared sandbox starts: shorter tasks run a bubblewrap per call. */
  shareAfterCalls: z.number().int().min(1).default(4),
})
export type Config = z.output<typeof Config>

export function apply(ctx: Context, config: Config): void {
  const local = new LocalSubprocess(ctx, config)
  ctx.reflect.set('subprocess', routed('subprocess', local))
}
