import type { Context } from '@deepseek-ai/cordis'
import { readFileSync } from 'node:fs'
import { z } from 'zod'
import { HostService } from '../service.js'

export const name = 'host'
export const inject = ['sessions', 'sessionStore', 'agents', 'llm', 'tools', 'permission', 'approval', 'settings', 'credentials']
export const Config = z.object({}).strict().default({})

function ownVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
}

/** `ctx.host` (see HostService); declares the host's own session event types. */
export function apply(ctx: Context): void {
  for (const type of ['question/request', 'question/answer']) ctx.sessions.defineEventType(type)
  const launcher = ctx.get('launcher') as { version?: string } | undefined
  const storeDir = (ctx.sessionStore as { dir?: unknown }).dir
  new HostService(ctx, { version: launcher?.version ?? ownVersion(), storeDir: typeof storeDir === 'string' ? storeDir : undefined })
}
