import type { CallCard, SessionEvent } from '@dsh/protocol'

// C0 controls but tab and newline, DEL, and C1 controls (U+009B is a one-byte CSI).
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/**
 * `text` made inert for a terminal: every control character that could start an escape
 * sequence (ESC, CSI, BEL, backspace, carriage return, …) is shown as `\xNN` instead.
 * Model-chosen text (commands, tool names, notices quoting a server's stderr) passes through
 * this before it reaches a human's terminal. Pure.
 */
export function terminalSafe(text: string): string {
  return text.replace(CONTROLS, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
}

/** One stderr line for a tool call, from its card: `→ bash: ls -la`; terminal-safe. Pure. */
export function progressLine(name: string, card: CallCard): string {
  const title = terminalSafe(card.title.replace(/\s+/g, ' ').trim())
  const shown = title.length > 120 ? title.slice(0, 117) + '...' : title
  const tool = terminalSafe(name)
  return shown && shown !== tool ? `→ ${tool}: ${shown}` : `→ ${tool}`
}

/** The NDJSON line of an event for `--json`. */
export function eventLine(event: SessionEvent): string {
  return JSON.stringify(event) + '\n'
}
