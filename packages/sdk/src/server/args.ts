import { DshError } from '@dsh/protocol'

export const SDK_USAGE = `dsh sdk — the host API as NDJSON JSON-RPC 2.0 over stdio

Usage:
  dsh sdk                  serve one client on stdin/stdout (stderr: logs)
  dsh sdk --print-schema   print rpc/describe (every method's JSON Schema) and exit
  dsh sdk --help

Environment:
  DSH_SDK_DEBUG=1          log each frame's method on stderr`

export type SdkCommand = { type: 'serve' } | { type: 'print-schema' } | { type: 'help' }

/** The sdk surface's own command line (what the launcher passed on). */
export function parseSdkArgs(argv: readonly string[]): SdkCommand {
  let command: SdkCommand = { type: 'serve' }
  for (const token of argv) {
    if (token === '--help' || token === '-h') return { type: 'help' }
    if (token === '--print-schema') command = { type: 'print-schema' }
    else throw new DshError('USAGE', `unknown argument ${JSON.stringify(token.slice(0, 80))} for dsh sdk`, { hint: 'use: dsh sdk [--print-schema]' })
  }
  return command
}
