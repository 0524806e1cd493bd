import type { Context } from '@deepseek-ai/cordis'
import { Config } from '../config.js'
import { McpService } from '../service.js'

/**
 * `ctx.mcp`, the MCP client. The servers in `config.servers` start in the background,
 * in parallel with the rest of boot and session set-up (the plugin counts as started at
 * once); an agent's step waits for servers still starting before its request is built,
 * each bounded by its start timeout (`connectTimeoutMs`, default 10 s). A server that
 * fails is a notice, never a plugin failure, and is listed in the system prompt.
 * MCP tool calls obey the session's permission preset (`tools/pre-execute`, see
 * `mcpGate`). Disposal closes every connection and stops every stdio server with its
 * process group.
 */
export const name = '@dsh/mcp/client'
export const inject = ['tools']
export { Config }

export function apply(ctx: Context, config: Config): void {
  const service = new McpService(ctx, config)
  ctx.effect(() => () => service.closeAll(), 'mcp.closeAll')
  ctx.on('session/opened', (session) => service.opened(session))
  ctx.on('session/closed', (session) => service.closed(session))
  ctx.on('agent/pre-step', async (agent, messages, next) => {
    await service.settled(agent.session.id)
    return next()
  })
  // Innermost answers first: a deny or ask from inside stands; otherwise the preset's verdict.
  ctx.on('tools/pre-execute', async (call, next) => {
    const inner = await next()
    if (inner.action !== 'allow') return inner
    return service.gate(call) ?? inner
  })
  ctx.inject(['prompt'], (c) => {
    c.effect(() => c.prompt.section({
      id: 'mcp-unavailable',
      order: 450,
      render: ({ sessionId }) => {
        const lines = service.unavailable(sessionId)
        return lines.length ? `MCP servers that are not available (their tools fail or are missing):\n${lines.map((l) => `- ${l}`).join('\n')}` : undefined
      },
    }), 'mcp.promptSection')
  })
  for (const [server, spec] of Object.entries(config.servers)) {
    service.mount(server, spec).catch((error: unknown) => ctx.logger('mcp').warn('MCP server %s was not mounted: %s', server, error))
  }
}
