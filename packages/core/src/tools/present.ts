import type { CallCard, Json, ResultCard, ToolResult } from '@dsh/protocol'
import { textOf } from '@dsh/protocol'
import type { ToolDefinition } from './define.js'

/** Cards for a call, pure: the tool's presenter, or a generic card naming the tool and its input. */
export function presentCall(tool: ToolDefinition | undefined, name: string, args: Json): CallCard {
  // a presenter sees only arguments its tool would accept (the model's may be invalid)
  const parsed = tool?.presentCall && args !== null ? tool.parameters.safeParse(args) : undefined
  if (tool?.presentCall && parsed?.success) {
    try {
      return tool.presentCall(parsed.data)
    } catch {
      // A presenter that cannot read these args falls back to the generic card.
    }
  }
  return { card: 'generic', title: name, kind: tool?.kind ?? 'other' }
}

export function presentResult(tool: ToolDefinition | undefined, args: Json, result: ToolResult): ResultCard {
  const parsed = tool?.presentResult && args !== null && !result.isError ? tool.parameters.safeParse(args) : undefined
  if (tool?.presentResult && parsed?.success) {
    try {
      return tool.presentResult(parsed.data, result)
    } catch {
      // fall through to the generic card
    }
  }
  const text = textOf(result.content)
  return { card: 'generic', text: text ? '```\n' + text + '\n```' : '', ...(result.isError ? { isError: true } : {}) }
}
