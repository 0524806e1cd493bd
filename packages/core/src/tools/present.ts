import type { CallCard, Json, ResultCard, ToolResult } from '@dsh/protocol'
import { textOf } from '@dsh/protocol'
import type { ToolDefinition } from './define.js'

/** Cards for a call, pure: the tool's presenter, or a generic card naming the tool and its input. */
export function presentCall(tool: ToolDefinition | undefined, name: string, args: Json): CallCard {
  if (tool?.presentCall && args !== null) {
    try {
      return tool.presentCall(args)
    } catch {
      // A presenter that cannot read these args falls back to the generic card.
    }
  }
  return { card: 'generic', title: name, kind: tool?.kind ?? 'other' }
}

export function presentResult(tool: ToolDefinition | undefined, args: Json, result: ToolResult): ResultCard {
  if (tool?.presentResult && args !== null && !result.isError) {
    try {
      return tool.presentResult(args, result)
    } catch {
      // fall through to the generic card
    }
  }
  const text = textOf(result.content)
  return { card: 'generic', text: text ? '```\n' + text + '\n```' : '', ...(result.isError ? { isError: true } : {}) }
}
