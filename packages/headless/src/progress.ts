import type { CallCard, SessionEvent } from '@dsh/protocol'

/** One stderr line for a tool call, from its card: `→ bash: ls -la`. Pure. */
export function progressLine(name: string, card: CallCard): string {
  const title = card.title.replace(/\s+/g, ' ').trim()
  const shown = title.length > 120 ? title.slice(0, 117) + '...' : title
  return shown && shown !== name ? `→ ${name}: ${shown}` : `→ ${name}`
}

/** The NDJSON line of an event for `--json`. */
export function eventLine(event: SessionEvent): string {
  return JSON.stringify(event) + '\n'
}
