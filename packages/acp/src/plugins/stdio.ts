import { Readable, Writable } from 'node:stream'
import type { Context } from '@deepseek-ai/cordis'
import { formatError } from '@dsh/protocol'
import { z } from 'zod'
import { ACP_USAGE, parseAcpArgs, type AcpCommand } from '../args.js'
import { boundedNdJsonStream, MAX_FRAME_BYTES } from '../frames.js'
import { readApiKey } from '../login.js'

export const name = 'acp-stdio'
export const inject = ['acpServer', 'launcher', 'credentials', 'llm']
export const Config = z.object({}).default({})

/**
 * The stdio transport of the ACP server: NDJSON JSON-RPC on the launcher's stdin/stdout.
 * Frames over 32 MiB are refused (frames.ts). stdout carries frames only (console.log/info/debug are sent to stderr while it
 * serves); DSH_ACP_DEBUG=1 logs each frame on stderr. stdin EOF closes the connection
 * (turns cancelled, commands killed, sessions unlocked) and exits 0. `login` stores an
 * API key instead (the ACP `terminal` auth method runs the agent with `login`).
 */
export function apply(ctx: Context): void {
  const { launcher } = ctx
  const release = launcher.hold()
  const fail = (error: unknown, code: number) => {
    launcher.stderr.write(`${formatError(error)}\n`)
    release()
    launcher.exit(code)
  }
  let command: AcpCommand
  try {
    command = parseAcpArgs(launcher.argv, launcher.env)
  } catch (error) {
    return fail(error, 2)
  }
  if (command.type === 'help') {
    launcher.stdout.write(`${ACP_USAGE}\n`)
    release()
    return launcher.exit(0)
  }
  if (command.type === 'login') {
    const provider = command.provider ?? ctx.llm.defaults().provider
    readApiKey({ stdin: launcher.stdin as never, stderr: launcher.stderr }, provider).then((key) => {
      ctx.credentials.set(provider, { apiKey: key })
      launcher.stderr.write(`stored the ${provider} key in ${ctx.credentials.file}\n`)
      release()
      launcher.exit(0)
    }, (error: unknown) => fail(error, 1))
    return
  }

  // a reload that restarts a row this server depends on would cut the editor off mid-session
  launcher.pin('an ACP client is connected (restarting rows would drop its sessions)')
  ctx.effect(() => guardStdout(), 'acp: console off stdout')
  const stdout = launcher.stdout as Writable
  /** The exit code once the connection has closed: 0 at stdin EOF, 1 when stdin failed, 130/143/129 on SIGINT/SIGTERM/SIGHUP. */
  let code = 0
  const swallow = () => undefined
  stdout.on('error', swallow)
  ctx.effect(() => () => { stdout.off('error', swallow) }, 'acp: stdout errors')
  // a frame over the limit is refused with an error and a stderr line; the connection goes on
  const stream = boundedNdJsonStream(Writable.toWeb(stdout) as WritableStream<Uint8Array>, Readable.toWeb(launcher.stdin as Readable) as ReadableStream<Uint8Array>, {
    onOversize: (bytes, id) => launcher.stderr.write(`dsh-acp: refused a frame of ${bytes} bytes${id === null ? '' : ` (request ${String(id).slice(0, 40)})`}: the limit is ${MAX_FRAME_BYTES} bytes\n`),
    onInputError: (error) => {
      launcher.stderr.write(`dsh-acp: reading stdin failed, closing the connection: ${error instanceof Error ? error.message : String(error)}\n`)
      code = 1
    },
  })
  const debug = launcher.env.DSH_ACP_DEBUG === '1' ? (line: string) => { launcher.stderr.write(`[acp] ${line}\n`) } : undefined
  const handle = ctx.acpServer.connect(stream, { defaults: command.defaults, ...(debug ? { debug } : {}) })
  debug?.('serving ACP on stdio')
  ctx.on('launcher/signal', (signal) => {
    code = signal === 'SIGINT' ? 130 : signal === 'SIGHUP' ? 129 : 143
    void handle.close()
    return true
  })
  void handle.closed.then(() => {
    debug?.('connection closed')
    release()
    launcher.exit(code)
  })
  ctx.effect(() => () => handle.close(), 'acp: close stdio connection')
}

/** Sends console.log/info/debug to stderr; returns the undo. */
function guardStdout(): () => void {
  const saved = { log: console.log, info: console.info, debug: console.debug }
  console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args)
  return () => Object.assign(console, saved)
}
