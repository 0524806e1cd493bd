import { isAbsolute, resolve } from 'node:path'
import type * as acp from '@agentclientprotocol/sdk/unstable'
import { type CallCard, type Json, type ResultCard, type ToolLocation, type ToolResult } from '@dsh/protocol'

/**
 * Card → wire, pure. The bridge knows no tool by name: every call and result is mapped
 * from the provider-neutral cards its tool's presenters produce (packages/protocol tools.ts).
 */
export interface WireOptions {
  /** The client declared `clientCapabilities._meta.terminal_output === true` (seed 000 terminal cards). */
  terminalOutput: boolean
  /** The session's workspace: relative card paths resolve against it (ACP paths are absolute). */
  cwd: string
}

/** The display terminal of a call: derived from the call id (unique per call), never reused. */
export function terminalId(callId: string): string {
  return `dsh-term:${callId}`
}

export const textBlock = (text: string): acp.ToolCallContent => ({ type: 'content', content: { type: 'text', text } })

/** A fenced Markdown block whose fence is longer than any backtick run inside `text`. */
export function fence(text: string, lang = ''): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length))
  const marks = '`'.repeat(longest + 1)
  return `${marks}${lang}\n${text}${text.endsWith('\n') || !text ? '' : '\n'}${marks}`
}

function absolute(cwd: string, path: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path)
}

function locations(cwd: string, list: readonly ToolLocation[] | undefined): acp.ToolCallLocation[] {
  return (list ?? []).map((l) => ({ path: absolute(cwd, l.path), ...(l.line !== undefined ? { line: l.line } : {}) }))
}

/** The fields of a `tool_call` for a call card (without toolCallId/status). */
export type CallWire = Pick<acp.ToolCall, 'title' | 'kind' | 'content' | 'locations' | 'rawInput' | '_meta'>

export function callToWire(callId: string, card: CallCard, rawInput: Json, opts: WireOptions): CallWire {
  const base = { rawInput }
  switch (card.card) {
    case 'generic':
      return {
        ...base, title: card.title, kind: card.kind ?? 'other',
        content: card.description ? [textBlock(card.description)] : [],
        locations: locations(opts.cwd, card.locations),
      }
    case 'terminal': {
      const content = card.description ? [textBlock(card.description)] : []
      if (!opts.terminalOutput) return { ...base, title: card.title, kind: 'execute', content, locations: [] }
      const id = terminalId(callId)
      return {
        ...base, title: card.title, kind: 'execute', locations: [],
        content: [...content, { type: 'terminal', terminalId: id }],
        _meta: { terminal_info: { terminal_id: id, cwd: absolute(opts.cwd, card.cwd ?? '.') } },
      }
    }
    case 'diff': {
      const path = absolute(opts.cwd, card.path)
      return { ...base, title: card.title, kind: 'edit', content: [{ type: 'diff', path, oldText: card.oldText, newText: card.newText }], locations: [{ path }] }
    }
    case 'read':
      return {
        ...base, title: card.title, kind: 'read', content: [],
        locations: [{ path: absolute(opts.cwd, card.path), ...(card.line !== undefined ? { line: card.line } : {}) }],
      }
    case 'search':
      return { ...base, title: card.title, kind: 'search', content: [], locations: card.path ? [{ path: absolute(opts.cwd, card.path) }] : [] }
    case 'web':
      return { ...base, title: card.title, kind: 'fetch', content: [], locations: [] }
  }
}

/** The raw output of a call as the model saw it. */
export function rawOutput(result: ToolResult): Json {
  return { content: result.content as unknown as Json, isError: result.isError }
}

function exitLine(card: Extract<ResultCard, { card: 'terminal' }>): string {
  if (card.signal) return `[killed by signal: ${card.signal}]`
  if (card.exitCode) return `[exit code: ${card.exitCode}]`
  return ''
}

/**
 * The updates that finish a call. With terminal cards (a terminal call card, a terminal
 * result card and the capability): `_meta.terminal_output` with what was not streamed yet,
 * then `_meta.terminal_exit` with the status — neither carries `content` (update content
 * replaces the call's and would erase the terminal). Otherwise one update with the
 * result's content (for a command: its description, then the output and exit marker in a
 * console fence) and the final status.
 * `streamed` is the live output already sent for this call (terminal mode only).
 */
export function resultToWire(
  callId: string, callCard: CallCard, card: ResultCard, result: ToolResult, opts: WireOptions, streamed = '',
): acp.ToolCallUpdate[] {
  const status = result.isError ? 'failed' : 'completed'
  const raw = rawOutput(result)
  if (card.card === 'terminal' && callCard.card === 'terminal' && opts.terminalOutput) {
    const id = terminalId(callId)
    const sent = streamed.replace(/\n+$/, '')
    const rest = !streamed ? card.output : card.output.startsWith(sent) ? card.output.slice(sent.length) : ''
    const exit = card.signal ? { terminal_id: id, signal: card.signal } : { terminal_id: id, exit_code: card.exitCode ?? 0 }
    const updates: acp.ToolCallUpdate[] = []
    if (rest || !streamed) updates.push({ toolCallId: callId, _meta: { terminal_output: { terminal_id: id, data: rest } } })
    updates.push({ toolCallId: callId, status, rawOutput: raw, _meta: { terminal_exit: exit } })
    return updates
  }
  const update: acp.ToolCallUpdate = { toolCallId: callId, status, rawOutput: raw }
  switch (card.card) {
    case 'terminal': {
      const exit = exitLine(card)
      const body = card.output && exit ? `${card.output}\n${exit}` : card.output || exit
      const description = callCard.card === 'terminal' ? callCard.description : undefined
      update.content = [...(description ? [textBlock(description)] : []), textBlock(fence(body, 'console'))]
      break
    }
    case 'diff': {
      const diffs = card.diffs.map((d) => ({ type: 'diff' as const, path: absolute(opts.cwd, d.path), oldText: d.oldText, newText: d.newText }))
      update.content = diffs
      update.locations = diffs.map((d) => ({ path: d.path }))
      break
    }
    case 'read':
      update.content = [textBlock(fence(card.text))]
      break
    case 'generic':
    case 'search':
    case 'web':
      if (card.text) update.content = [textBlock(card.text)]
      break
  }
  return [update]
}

/**
 * A live output delta of a running call. Terminal mode: appended to the display terminal
 * (`_meta.terminal_output`, Zed appends). Otherwise the console fence of everything so far
 * replaces the call's content (callers throttle these).
 */
export function progressToWire(callId: string, callCard: CallCard, soFar: string, delta: string, opts: WireOptions): acp.ToolCallUpdate {
  if (callCard.card === 'terminal' && opts.terminalOutput) {
    return { toolCallId: callId, _meta: { terminal_output: { terminal_id: terminalId(callId), data: delta } } }
  }
  const description = callCard.card === 'terminal' || callCard.card === 'generic' ? callCard.description : undefined
  return { toolCallId: callId, status: 'in_progress', content: [...(description ? [textBlock(description)] : []), textBlock(fence(soFar, 'console'))] }
}
