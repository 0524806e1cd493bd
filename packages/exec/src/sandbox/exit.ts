import { constants } from 'node:os'

const NAMES = new Map<number, string>(Object.entries(constants.signals).map(([name, n]) => [n, name]))

/**
 * The exit status of a command run inside bubblewrap, as the command itself ended.
 * bwrap cannot die of its child's signal, so it exits 128+N when the command was killed
 * by signal N; that is mapped back to the signal (exitCode null), as an unsandboxed run
 * reports it. Limit: a sandboxed command that itself exits 129–192 reads as a signal.
 */
export function sandboxedExit(result: { exitCode: number | null; signal: string | null }): { exitCode: number | null; signal: string | null } {
  if (result.signal !== null || result.exitCode === null || result.exitCode <= 128) return result
  const name = NAMES.get(result.exitCode - 128)
  return name ? { exitCode: null, signal: name } : result
}
