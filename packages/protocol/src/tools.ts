import type { Json } from './json.js'
import type { ToolContent } from './content.js'

/** What the model sees of a tool. `parameters` is a JSON Schema object. */
export interface ToolSchema {
  name: string
  description: string
  parameters: Record<string, Json>
}

/** The persisted outcome of one call (the `tool/result` event's payload). */
export interface ToolResult {
  content: ToolContent[]
  isError: boolean
}

/** Presentation kinds, provider-neutral (ACP maps them 1:1 to its own). */
export type ToolKind = 'read' | 'edit' | 'delete' | 'move' | 'search' | 'execute' | 'think' | 'fetch' | 'other'

export interface ToolLocation { path: string; line?: number }

/**
 * Card vocabulary for UIs. Pure presenters produce these; bridges (ACP, web)
 * map card → wire. No surface type appears here.
 */
export type CallCard =
  | { card: 'generic'; title: string; kind?: ToolKind; description?: string; locations?: ToolLocation[] }
  /** A foreground command: the command is the title, `description` renders above the card. */
  | { card: 'terminal'; title: string; description?: string; cwd?: string }
  | { card: 'diff'; title: string; path: string; oldText: string | null; newText: string }
  | { card: 'read'; title: string; path: string; line?: number; limit?: number }
  | { card: 'search'; title: string; query: string; path?: string }
  | { card: 'web'; title: string; url: string }

export interface FileDiff { path: string; oldText: string | null; newText: string }

export type ResultCard =
  /** Markdown text (fenced blocks allowed). */
  | { card: 'generic'; text: string; isError?: boolean }
  | { card: 'terminal'; output: string; exitCode?: number; signal?: string }
  | { card: 'diff'; diffs: FileDiff[]; text?: string }
  | { card: 'read'; path: string; text: string }
  | { card: 'search'; text: string; matches?: number }
  | { card: 'web'; text: string }

/**
 * An ignorable session event a file tool logs when it replaces an existing text file:
 * `{callId, path, oldText}` (`path` as the call gave it). Surfaces use it to show the
 * replaced content in the call's diff (the presenters are pure and cannot read it).
 */
export const FILE_BEFORE_EVENT = 'file/before'
export interface FileBeforeData { callId: string; path: string; oldText: string }
