import { createHash } from 'node:crypto'
import { DshError, PERMISSION_PRESETS } from '@dsh/protocol'
import YAML from 'yaml'
import { z } from 'zod'
import { parseWorldUrl } from '../url.js'

export const Task = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'an id of letters, digits, ".", "_" or "-" (it names the task\'s directory)'),
  workspace: z.string().min(1).optional(),
  prompt: z.string().min(1),
  model: z.string().min(1).optional(),
  permissionMode: z.enum(PERMISSION_PRESETS.map((p) => p.id) as [string, ...string[]]).optional(),
})
export type Task = z.output<typeof Task>

export const Host = z.strictObject({
  url: z.string().min(1),
  identity: z.string().min(1).optional(),
  knownHosts: z.string().min(1).optional(),
  slots: z.number().int().positive().default(1),
})
export type Host = z.output<typeof Host>

export interface TaskList {
  tasks: Task[]
  /** `line N: what is wrong`, one per bad line. */
  problems: string[]
  /** Identifies the list (its valid tasks, in order): a results file records it. */
  digest: string
}

function issueText(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') + ': ' : ''}${i.message}`).join('; ')
}

/** TASKS.jsonl: one task per line ("\n"-separated; blank lines skipped). Duplicate ids are problems. Pure. */
export function parseTasks(text: string): TaskList {
  const tasks: Task[] = []
  const problems: string[] = []
  const seen = new Map<string, number>()
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim()
    if (!line) continue
    let raw: unknown
    try {
      raw = JSON.parse(line)
    } catch (error) {
      problems.push(`line ${i + 1}: not JSON (${(error as Error).message})`)
      continue
    }
    const parsed = Task.safeParse(raw)
    if (!parsed.success) {
      problems.push(`line ${i + 1}: ${issueText(parsed.error)}`)
      continue
    }
    const first = seen.get(parsed.data.id)
    if (first !== undefined) {
      problems.push(`line ${i + 1}: duplicate task id "${parsed.data.id}" (first on line ${first})`)
      continue
    }
    seen.set(parsed.data.id, i + 1)
    tasks.push(parsed.data)
  }
  const digest = createHash('sha256').update(JSON.stringify(tasks)).digest('hex').slice(0, 16)
  return { tasks, problems, digest }
}

/** HOSTS.yaml: a list of hosts; BATCH_HOSTS names the entry and key that is wrong. Pure. */
export function parseHosts(text: string, file: string): Host[] {
  let raw: unknown
  try {
    raw = YAML.parse(text)
  } catch (error) {
    throw new DshError('BATCH_HOSTS', `${file}: not YAML (${(error as Error).message})`)
  }
  if (!Array.isArray(raw) || raw.length === 0) throw new DshError('BATCH_HOSTS', `${file}: expected a non-empty list of hosts`, { hint: '- {url: ssh://USER@HOST[:PORT]/ROOT, identity: FILE, knownHosts: FILE, slots: 1}' })
  return raw.map((entry, i) => {
    const parsed = Host.safeParse(entry)
    if (!parsed.success) throw new DshError('BATCH_HOSTS', `${file}: host ${i + 1}: ${issueText(parsed.error)}`)
    try {
      parseWorldUrl(parsed.data.url)
    } catch (error) {
      throw new DshError('BATCH_HOSTS', `${file}: host ${i + 1}: ${(error as Error).message}`)
    }
    return parsed.data
  })
}

export interface TaskResult {
  id: string
  sessionId: string | null
  reason: string
  text: string
  usage: { inputTokens: number; outputTokens: number }
  wallMs: number
  host: string | null
  error?: { code: string; message: string }
}

export interface ResultsState {
  /** Ids whose last result is `completed`. */
  done: Set<string>
  /** The session each started task ran in (for a resume). */
  sessions: Map<string, string>
}

/**
 * Reads a results file against a task list: its first line is the list's header
 * (`{"batch": {digest, tasks}}`); a header of another list is BATCH_RESULTS_MISMATCH.
 * Lines: results, and `{"start": {id, sessionId}}` records. A torn last line is ignored. Pure.
 */
export function readResults(text: string, list: TaskList, file: string): ResultsState {
  const state: ResultsState = { done: new Set(), sessions: new Map() }
  const lines = text.split('\n').filter((l) => l.trim())
  if (lines.length === 0) return state
  let header: { batch?: { digest?: string } } | undefined
  try {
    header = JSON.parse(lines[0]!) as typeof header
  } catch { /* below */ }
  if (!header?.batch?.digest) throw new DshError('BATCH_RESULTS_MISMATCH', `${file} is not a dsh batch results file (no header line)`, { hint: 'pass another --out file' })
  if (header.batch.digest !== list.digest) {
    throw new DshError('BATCH_RESULTS_MISMATCH', `${file} holds results of a different task list (digest ${header.batch.digest}, this list is ${list.digest})`, {
      hint: 'pass another --out file, or run the task list those results came from',
    })
  }
  for (let i = 1; i < lines.length; i++) {
    let row: Partial<TaskResult> & { start?: { id: string; sessionId: string } }
    try {
      row = JSON.parse(lines[i]!) as typeof row
    } catch {
      continue
    }
    if (row.start) state.sessions.set(row.start.id, row.start.sessionId)
    else if (row.id && row.reason === 'completed') state.done.add(row.id)
    else if (row.id) state.done.delete(row.id)
  }
  return state
}
