import { readFileSync } from 'node:fs'
import type { Context } from '@deepseek-ai/cordis'
import { PERMISSION_PRESETS } from '@dsh/protocol'
import { z } from 'zod'
import { REASONING_EFFORTS } from '../config.js'
import { AcpServer } from '../server.js'

export { AcpServer }
export const name = 'acp-server'
export const inject = ['host', 'sessions', 'llm', 'tools', 'permission', 'credentials', 'settings']
export const Config = z.object({
  /** Session defaults (a transport's flags override them per connection). */
  provider: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  maxTokens: z.number().int().positive().optional(),
  permissionMode: z.enum(PERMISSION_PRESETS.map((p) => p.id) as [string, ...string[]]).optional(),
  reasoningEffort: z.enum(REASONING_EFFORTS).optional(),
  /** Sessions per `session/list` page. */
  pageSize: z.number().int().positive().default(50),
}).default({ pageSize: 50 })

function ownVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
}

/** `ctx.acpServer`: the transport-agnostic ACP server (see AcpServer). */
export function apply(ctx: Context, config: z.output<typeof Config>): void {
  const { pageSize, ...defaults } = config
  const launcher = ctx.get('launcher')
  new AcpServer(ctx, { defaults, pageSize, version: launcher?.version ?? ownVersion() })
}
