import type { Context } from '@deepseek-ai/cordis'
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
      const text = message.args.map((a: unknown) => (a instanceof Error ? (io.debug ? a.stack ?? a.message : a.message) : typeof a === 'string' ? a : JSON.stringify(a))).join(' ')
      io.stderr.write(`[${message.name}] ${text}\n`)
    },
    levels: { default: io.debug ? 3 : 2 },
  })
}
