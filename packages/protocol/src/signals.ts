/** The signals a surface winds down on: Ctrl-C, a polite kill, and its terminal closing. */
export type LauncherSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP'

/** The exit code of a run a signal ended: 128 + the signal's number (SIGHUP 129, SIGINT 130, SIGTERM 143). */
export function signalExitCode(signal: LauncherSignal): number {
  return signal === 'SIGINT' ? 130 : signal === 'SIGHUP' ? 129 : 143
}
