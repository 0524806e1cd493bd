import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'

/** What the permission preset says about one MCP tool call before it runs. */
export type McpGate = { action: 'allow' } | { action: 'ask'; reason: string }

/** The facts about a call the gate decides on. */
export interface McpGateInput {
  /** The session's permission preset id (read-only, workspace-write, danger-full-access). */
  preset: string
  server: string
  /** The tool's server-side name. */
  tool: string
  annotations: ToolAnnotations | undefined
  /** The server's config says `trusted: true`. */
  trusted: boolean
}

/**
 * The permission preset applied to an MCP tool (pure). dsh cannot sandbox an MCP server (it
 * is its own process), so the preset decides approval from the tool's annotations:
 * `read-only` asks for every tool not annotated `readOnlyHint: true`; `workspace-write` asks
 * for tools annotated `destructiveHint: true` (and not read-only); `danger-full-access`
 * never asks; a trusted server is never asked about. Any other preset id asks (fail closed).
 * An `ask` on a surface without an answerer (headless) is a denial that carries `reason`.
 */
export function mcpGate(input: McpGateInput): McpGate {
  const { preset, server, tool, annotations, trusted } = input
  if (trusted || preset === 'danger-full-access') return { action: 'allow' }
  const readOnly = annotations?.readOnlyHint === true
  if (preset === 'read-only') {
    return readOnly ? { action: 'allow' } : {
      action: 'ask',
      reason: `the session is read-only and the MCP tool ${tool} of server ${server} is not annotated readOnlyHint: true (dsh cannot sandbox an MCP server)`,
    }
  }
  if (preset === 'workspace-write') {
    return !readOnly && annotations?.destructiveHint === true ? {
      action: 'ask',
      reason: `the MCP tool ${tool} of server ${server} is annotated destructiveHint: true`,
    } : { action: 'allow' }
  }
  return { action: 'ask', reason: `unknown permission preset "${preset}"` }
}
