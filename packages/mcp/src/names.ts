import { createHash } from 'node:crypto'

/** Longest tool name the registry (and the providers) accept. */
export const MAX_TOOL_NAME = 64

/** Replaces every character outside [a-zA-Z0-9_-] with `_` (an empty name becomes `_`). */
export function sanitizeName(name: string): string {
  const out = name.replace(/[^a-zA-Z0-9_-]/g, '_')
  return out.length ? out : '_'
}

const shortHash = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 8)

/**
 * The model-facing name of an MCP tool: `mcp__<server>__<tool>`, both parts sanitized.
 * When that is longer than 64 characters, or already in `taken` (two raw names that
 * sanitize alike), it is cut and suffixed with a hash of the raw pair, so the result is
 * deterministic, at most 64 characters and distinct from everything in `taken`.
 */
export function mcpToolName(server: string, tool: string, taken: ReadonlySet<string> = new Set()): string {
  const plain = `mcp__${sanitizeName(server)}__${sanitizeName(tool)}`
  if (plain.length <= MAX_TOOL_NAME && !taken.has(plain)) return plain
  for (let salt = 0; ; salt++) {
    const suffix = `_${shortHash(`${server}\u0000${tool}\u0000${salt}`)}`
    const name = plain.slice(0, MAX_TOOL_NAME - suffix.length) + suffix
    if (!taken.has(name)) return name
  }
}
