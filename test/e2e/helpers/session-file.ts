import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { SessionEvent } from '@dsh/protocol'

/** The events of a stored session, read straight from its JSONL file (header line skipped). */
export function readSessionFile(home: string, id: string): { header: Record<string, unknown>; events: SessionEvent[] } {
  const file = join(home, 'sessions', `${id}.jsonl`)
  if (!existsSync(file)) throw new Error(`no session file ${file}`)
  const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0)
  const [header, ...rest] = lines
  return { header: JSON.parse(header!) as Record<string, unknown>, events: rest.map((l) => JSON.parse(l) as SessionEvent) }
}

/** The session id from the first stderr line (`session: <id>`). */
export function sessionIdOf(stderr: string): string {
  const first = stderr.split('\n')[0] ?? ''
  const match = /^session: (\S+)$/.exec(first)
  if (!match) throw new Error(`first stderr line is not "session: <id>": ${JSON.stringify(stderr.slice(0, 300))}`)
  return match[1]!
}

/** Process ids whose command line contains `needle` (Linux /proc). */
export function processesMatching(needle: string): number[] {
  const out: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ')
      if (cmd.includes(needle)) out.push(Number(entry))
    } catch {
      // the process ended while we looked
    }
  }
  return out
}
