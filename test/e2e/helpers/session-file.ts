import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { deriveMessages } from '@dsh/core'
import { buildMessagesRequest } from '@dsh/llm-anthropic'
import { buildChatRequest } from '@dsh/llm-openai'
import type { SessionEvent } from '@dsh/protocol'
import { expectedBodies, requestsFromLog, type MockModel } from '@dsh/testkit'

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

/**
 * "Model-visible means logged", for every request a test's dsh runs sent: each recorded
 * request must be the next one some stored session's log derives (header + history at the
 * moment it left), and every logged request must have been received.
 */
export function expectEveryRequestLogged(
  home: string,
  recorded: readonly { body: unknown }[],
  expectedFor: (events: SessionEvent[]) => unknown[],
): void {
  const dir = join(home, 'sessions')
  const queues = existsSync(dir)
    ? readdirSync(dir).filter((f) => f.endsWith('.jsonl')).map((f) => {
      const { header, events } = readSessionFile(home, f.slice(0, -6))
      const fork = !!(header.parent as { fork?: boolean } | undefined)?.fork
      return { id: f.slice(0, -6), fork, left: expectedFor(events).map((b) => JSON.stringify(b)) }
    })
    : []
  // a fork copies its source's log, so its first requests are the source's (already sent)
  const sent = new Set(recorded.map((r) => JSON.stringify(r.body)))
  for (const q of queues) if (q.fork) while (q.left.length && sent.has(q.left[0]!) && queues.some((o) => !o.fork && o.left.includes(q.left[0]!))) q.left.shift()
  recorded.forEach((request, index) => {
    const body = JSON.stringify(request.body)
    const queue = queues.find((q) => !q.fork && q.left[0] === body) ?? queues.find((q) => q.left[0] === body)
    if (!queue) {
      const heads = queues.map((q) => `${q.id}: ${q.left.length ? q.left[0]!.slice(0, 300) : '(none left)'}`).join('\n')
      throw new Error(`request ${index} is not what any session log derives next:\n${body.slice(0, 600)}\nexpected one of:\n${heads}`)
    }
    queue.left.shift()
  })
  const unsent = queues.filter((q) => q.left.length > 0)
  if (unsent.length) throw new Error(`logged requests never received: ${unsent.map((q) => `${q.id} (${q.left.length})`).join(', ')}`)
}

/** `expectEveryRequestLogged` for a test's home and mock model, with the recorded protocol's own request builder. */
export function expectModelSawOnlyLogs(home: string, model: MockModel): void {
  const build = model.requests[0]?.protocol === 'anthropic' ? buildMessagesRequest : buildChatRequest
  expectEveryRequestLogged(home, model.requests, (events) => expectedBodies(requestsFromLog(events, deriveMessages), build))
}
