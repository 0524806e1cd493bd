import { z } from 'zod'
import type { Json, ToolSchema } from '@dsh/protocol'
import type { ToolDefinition } from './define.js'

/** JSON Schema keys that cost request bytes and tell the model nothing. */
function clean(node: unknown): Json {
  if (Array.isArray(node)) return node.map(clean)
  if (!node || typeof node !== 'object') return node as Json
  const out: Record<string, Json> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema' || key === 'additionalProperties' && value === false) continue
    if ((key === 'maximum' && value === Number.MAX_SAFE_INTEGER) || (key === 'minimum' && value === Number.MIN_SAFE_INTEGER)) continue
    out[key] = clean(value)
  }
  return out
}

/** The schema sent to the model for a tool (zod → JSON Schema, input side, trimmed). */
export function toolSchema(tool: ToolDefinition): ToolSchema {
  const parameters = clean(tool.inputSchema ?? z.toJSONSchema(tool.parameters, { io: 'input', unrepresentable: 'any' })) as Record<string, Json>
  return { name: tool.name, description: tool.description, parameters }
}

/** A readable one-paragraph account of why arguments failed validation. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => {
    const at = issue.path.length ? issue.path.join('.') : '(root)'
    return `${at}: ${issue.message}`
  }).join('; ')
}
