import type { Context } from '@deepseek-ai/cordis'
import { Config } from '../config.js'
import { McpService } from '../service.js'

/**
 * `ctx.mcp`, the MCP client. The servers in `config.servers` are mounted for every
 * session before the plugin counts as started (each bounded by `connectTimeoutMs`; a
 * server that fails is a notice, not a plugin failure). Disposal closes every
 * connection and stops every stdio server with its process group.
 */
export const name = '@dsh/mcp/client'
export const inject = ['tools']
export { Config }

export async function apply(ctx: Context, config: Config): Promise<void> {
  const service = new McpService(ctx, config)
  ctx.effect(() => () => service.closeAll(), 'mcp.closeAll')
  await Promise.all(Object.entries(config.servers).map(([server, spec]) => service.mount(server, spec)))
}
