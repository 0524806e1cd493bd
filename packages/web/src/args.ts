/**
 * `dsh web [--port N] [--host 127.0.0.1|::1|localhost] [--no-open] [--help]`. Pure: a
 * non-loopback host is refused here, before anything listens.
 */
export interface WebArgs {
  port: number
  host: '127.0.0.1' | '::1' | 'localhost'
  open: boolean
}

export type ParsedWebArgs = { type: 'run'; args: WebArgs } | { type: 'help' } | { type: 'error'; message: string }

export const DEFAULT_PORT = 3080
const HOSTS = ['127.0.0.1', '::1', 'localhost'] as const

export const WEB_HELP = `Usage: dsh web [--port N] [--host 127.0.0.1|::1|localhost] [--no-open]

The local web UI over the host API, bound to loopback only.
  --port N     port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)
  --host H     loopback address to bind: 127.0.0.1 (default), ::1 or localhost
  --no-open    do not open a browser
The first stdout line is "dsh web: http://HOST:PORT/?token=TOKEN"; the token is per launch.
`

export function parseWebArgs(tokens: readonly string[]): ParsedWebArgs {
  const args: WebArgs = { port: DEFAULT_PORT, host: '127.0.0.1', open: true }
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    const eq = token.indexOf('=')
    const flag = token.startsWith('--') && eq > 0 ? token.slice(0, eq) : token
    const inline = token.startsWith('--') && eq > 0 ? token.slice(eq + 1) : undefined
    switch (flag) {
      case '--help': case '-h': return { type: 'help' }
      case '--no-open': args.open = false; continue
      case '--port': {
        const value = inline ?? tokens[++i]
        if (value === undefined || !/^\d{1,5}$/.test(value) || Number(value) > 65535) {
          return { type: 'error', message: `--port needs a number from 0 to 65535, got ${value === undefined ? 'nothing' : JSON.stringify(value)}` }
        }
        args.port = Number(value)
        continue
      }
      case '--host': {
        const value = inline ?? tokens[++i]
        if (!HOSTS.includes(value as WebArgs['host'])) {
          return { type: 'error', message: `--host must be a loopback address (${HOSTS.join(', ')}), got ${value === undefined ? 'nothing' : JSON.stringify(value)}: dsh web never listens beyond this machine` }
        }
        args.host = value as WebArgs['host']
        continue
      }
      default:
        return { type: 'error', message: `unknown argument ${JSON.stringify(token)} (accepted: --port N, --host H, --no-open, --help)` }
    }
  }
  return { type: 'run', args }
}
