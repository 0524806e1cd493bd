import { Logger, type Context } from '@deepseek-ai/cordis'
import { formatError } from '@dsh/protocol'
import type { RowStatus } from '@dsh/boot'

/** Launcher diagnostics go to stderr (stdout belongs to the surface). */
export interface Io {
  stderr: NodeJS.WritableStream
  debug: boolean
}

/** Prints `CODE: message` (+ hint); the stack only with DSH_DEBUG=1. */
export function printError(io: Io, error: unknown, prefix = ''): void {
  io.stderr.write(`${prefix}${formatError(error)}\n`)
  if (io.debug && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`)
}

/** One line per row that is not healthy: `row <id> (<name>): <reason>` or `waiting for <services>`. */
export function rowReport(statuses: readonly RowStatus[]): string[] {
  return statuses.flatMap((s) => {
    if (s.state === 'failed') return [`${s.optional ? 'optional ' : ''}row ${s.id} (${s.name}): ${s.reason ?? 'failed'}`]
    if (s.state === 'pending') return [`row ${s.id} (${s.name}): waiting for ${s.waitingFor?.length ? s.waitingFor.join(', ') : 'its services'}`]
    if (s.state === 'loading') return [`row ${s.id} (${s.name}): still loading`]
    return []
  })
}

type LogMessage = Parameters<typeof Logger.format>[1]
type Exporter = Parameters<typeof Logger.format>[0]

const describe = (value: unknown, debug: boolean): string =>
  value instanceof Error ? (debug ? value.stack ?? value.message : value.message) : typeof value === 'string' ? value : JSON.stringify(value) ?? String(value)

/**
 * One log message as text, its `%s`/`%d`/`%o`… placeholders filled the way cordis's own
 * exporters fill them; an Error fills `%s` with its message (its stack with `debug`) and
 * arguments left over are appended.
 */
export function formatLogMessage(message: LogMessage, debug: boolean): string {
  const text = (value: unknown) => describe(value, debug)
  const exporter: Exporter = { colors: false, formatters: { s: text, o: text, O: text }, export: () => undefined }
  return Logger.format(exporter, message)
}

/**
 * Shows plugin logs on stderr: warnings and errors whose first argument is not
 * an Error (cordis logs a failing plugin's Error itself; the launcher reports
 * those rows concisely). With DSH_DEBUG=1 every level, stacks included.
 */
export function installLogExporter(root: Context, io: Io): void {
  root.logger.exporter({
    colors: false,
    export: (message) => {
      if (!io.debug && (message.type === 'info' || message.type === 'debug' || message.args[0] instanceof Error)) return
      io.stderr.write(`[${message.name}] ${formatLogMessage(message, io.debug)}\n`)
    },
    levels: { default: io.debug ? 3 : 2 },
  })
}
