import type { ModelMessage, SessionEvent, Usage } from '@dsh/protocol'

/** How full the context window is: provider-reported when `estimated` is false. */
export interface ContextUse {
  tokens: number
  window: number
  estimated: boolean
}

/** `950`, `12.3k`, `128k`, `1M`, `1.5M` (pure). */
export function formatTokens(n: number): string {
  const scaled = (value: number, unit: string) => `${(Math.round(value * 10) / 10).toFixed(1).replace(/\.0$/, '')}${unit}`
  if (n < 1000) return String(Math.round(n))
  if (n < 999_950) return scaled(n / 1000, 'k')
  return scaled(n / 1_000_000, 'M')
}

/** `12.3k / 128k tokens (10%)`; an estimate is prefixed with `~` (pure). */
export function formatContextUse(use: ContextUse): string {
  const percent = use.window > 0 ? Math.round((use.tokens / use.window) * 100) : 0
  return `${use.estimated ? '~' : ''}${formatTokens(use.tokens)} / ${formatTokens(use.window)} tokens (${percent}%)`
}

/** chars/4 of what a request would carry: the derived history plus the last header (pure). */
export function estimateTokens(messages: readonly ModelMessage[], header?: { system: string; tools: unknown[] }): number {
  const chars = JSON.stringify(messages).length + (header ? header.system.length + JSON.stringify(header.tools).length : 0)
  return Math.ceil(chars / 4)
}

/**
 * The context use of a session (pure): the input tokens the provider reported for the
 * last request (the latest `assistant/message` usage), unless history was replaced
 * after it (compaction) or none was reported — then an estimate of history + header.
 */
export function contextUse(events: readonly SessionEvent[], messages: readonly ModelMessage[], window: number): ContextUse {
  let header: { system: string; tools: unknown[] } | undefined
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!
    if (event.type === 'history/replace') break
    if (event.type !== 'assistant/message') continue
    const usage = (event.data as { usage?: Usage }).usage
    if (usage) return { tokens: usage.inputTokens, window, estimated: false }
  }
  for (let i = events.length - 1; i >= 0 && !header; i--) {
    if (events[i]!.type === 'request/header') header = events[i]!.data as unknown as typeof header
  }
  return { tokens: estimateTokens(messages, header), window, estimated: true }
}

/** What `/status` shows. */
export interface StatusInfo {
  sessionId: string
  title?: string | undefined
  cwd: string
  provider: string
  model: string
  reasoningEffort?: string | undefined
  /** The agent preset id (absent when presets are not mounted). */
  agentPreset?: string | undefined
  permissionPreset: string
  /** Plan mode state (absent when plan mode is not mounted). */
  planMode?: boolean | undefined
  /** The session's remote execution world (`ssh://…`), absent for the local one. */
  world?: string | undefined
  context: ContextUse
  /** One line per MCP server the session sees (absent when MCP is not mounted). */
  mcp?: readonly string[] | undefined
}

/** The `/status` reply: one `label  value` line per fact (pure). */
export function formatStatus(info: StatusInfo): string {
  const rows: [string, string][] = [
    ['session', info.title ? `${info.sessionId} — ${info.title}` : info.sessionId],
    ['workspace', info.cwd],
    ...(info.world ? [['world', `${info.world} (the remote machine is the sandbox)`] as [string, string]] : []),
    ['model', `${info.provider}:${info.model}${info.reasoningEffort ? ` (effort ${info.reasoningEffort})` : ''}`],
  ]
  if (info.agentPreset !== undefined) rows.push(['agent', info.agentPreset])
  rows.push(['permission', info.permissionPreset])
  if (info.planMode !== undefined) rows.push(['plan mode', info.planMode ? 'on' : 'off'])
  rows.push(['context', formatContextUse(info.context)])
  info.mcp?.forEach((line, i) => rows.push([i === 0 ? 'mcp' : '', line]))
  const width = Math.max(...rows.map(([label]) => label.length)) + 2
  return rows.map(([label, value]) => label.padEnd(width) + value).join('\n')
}
