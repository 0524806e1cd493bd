/**
 * The bash model text and its exact inverse. Layout (each marker on its own line):
 *
 *   <output, trailing newlines removed>[\n if its last line looks like a marker]
 *   [output truncated: showing the last S of T lines (B bytes); full output: PATH]
 *   [sandbox denied: MESSAGE]
 *   [timed out after Nms]
 *   [killed by signal: SIG]  or  [exit code: N]   (non-zero only)
 *
 * Every marker is optional and appears in this order. A marker is preceded by a newline,
 * or starts the text when the output is empty. Output whose last line merely looks like
 * a marker (or like the empty placeholder) gets one extra newline, so `parseExitStatus`,
 * anchored at the end of the text, never reads output as status. Empty output with no
 * marker renders as NO_OUTPUT. Hence parseExitStatus(renderResult(s)) equals s with
 * `output` canonicalised (trailing newlines dropped) and `exitCode` null when `signal`
 * is set (0 when neither is).
 */

export interface Truncation {
  /** The 0600 file holding the whole stream. */
  spillPath: string
  totalBytes: number
  totalLines: number
  /** Lines of the tail kept in `output`. */
  shownLines: number
}

export interface ShellStatus {
  /** What the model sees of the stream (the tail when truncated). */
  output: string
  /** Null when killed by a signal. */
  exitCode: number | null
  signal: string | null
  timedOutMs?: number
  /** A one-line explanation of a write the sandbox refused. */
  sandboxDenial?: string
  truncation?: Truncation
}

export const NO_OUTPUT = '(no output)'

const SIGNAL_RE = /(^|\n)\[killed by signal: ([^\n\]]+)\]$/
const EXIT_RE = /(^|\n)\[exit code: (-?\d+)\]$/
const TIMEOUT_RE = /(^|\n)\[timed out after (\d+)ms\]$/
const DENIAL_RE = /(^|\n)\[sandbox denied: ([^\n]*)\]$/
const TRUNCATION_RE = /(^|\n)\[output truncated: showing the last (\d+) of (\d+) lines \((\d+) bytes\); full output: ([^\n]*)\]$/
/** A line that could be taken for a marker. */
const MARKER_LINE_RE = /^\[(killed by signal|exit code|timed out after|sandbox denied|output truncated)[^\n]*\]$/

const oneLine = (s: string) => s.replace(/[\r\n]+/g, ' ')

export function canonicalOutput(output: string): string {
  return output.replace(/\n+$/, '')
}

/** The informational markers (truncation, sandbox denial, timeout), in order. */
export function noteLines(status: Omit<ShellStatus, 'output' | 'exitCode' | 'signal'>): string[] {
  const lines: string[] = []
  const t = status.truncation
  if (t) lines.push(`[output truncated: showing the last ${t.shownLines} of ${t.totalLines} lines (${t.totalBytes} bytes); full output: ${oneLine(t.spillPath)}]`)
  if (status.sandboxDenial !== undefined) lines.push(`[sandbox denied: ${oneLine(status.sandboxDenial)}]`)
  if (status.timedOutMs !== undefined) lines.push(`[timed out after ${Math.round(status.timedOutMs)}ms]`)
  return lines
}

function exitLine(status: Pick<ShellStatus, 'exitCode' | 'signal'>): string | undefined {
  if (status.signal) return `[killed by signal: ${status.signal}]`
  if (status.exitCode !== null && status.exitCode !== 0) return `[exit code: ${status.exitCode}]`
  return undefined
}

function needsGuard(body: string): boolean {
  const last = body.slice(body.lastIndexOf('\n') + 1)
  return body.length > 0 && (MARKER_LINE_RE.test(last) || last === NO_OUTPUT)
}

export function renderResult(status: ShellStatus): string {
  const body = canonicalOutput(status.output)
  const exit = exitLine(status)
  const markers = [...noteLines(status), ...(exit ? [exit] : [])]
  if (!body) return markers.length ? markers.join('\n') : NO_OUTPUT
  const head = needsGuard(body) ? `${body}\n` : body
  return markers.length ? `${head}\n${markers.join('\n')}` : head
}

/** The exact inverse of `renderResult`; text without markers is a clean exit 0. */
export function parseExitStatus(text: string): ShellStatus {
  const status: ShellStatus = { output: '', exitCode: 0, signal: null }
  if (text === NO_OUTPUT) return status
  let rest = text
  const take = (re: RegExp): RegExpExecArray | null => {
    const m = re.exec(rest)
    if (m) rest = rest.slice(0, m.index)
    return m
  }
  const signal = take(SIGNAL_RE)
  if (signal) {
    status.signal = signal[2]!
    status.exitCode = null
  } else {
    const exit = take(EXIT_RE)
    if (exit) status.exitCode = Number(exit[2])
  }
  const timeout = take(TIMEOUT_RE)
  if (timeout) status.timedOutMs = Number(timeout[2])
  const denial = take(DENIAL_RE)
  if (denial) status.sandboxDenial = denial[2]!
  const cut = take(TRUNCATION_RE)
  if (cut) {
    status.truncation = { spillPath: cut[5]!, totalBytes: Number(cut[4]), totalLines: Number(cut[3]), shownLines: Number(cut[2]) }
  }
  status.output = rest.endsWith('\n') ? rest.slice(0, -1) : rest
  return status
}

/** The output shown on a terminal card: the body plus the informational markers, without the exit marker (the card carries it). */
export function cardOutput(status: ShellStatus): string {
  const body = canonicalOutput(status.output)
  return [...(body ? [body] : []), ...noteLines(status)].join('\n')
}
