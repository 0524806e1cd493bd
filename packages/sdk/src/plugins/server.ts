import type { Context } from '@deepseek-ai/cordis'
import { describeRpc } from '@dsh/host-api'
import type {} from '@dsh/host'
import { formatError } from '@dsh/protocol'
import { z } from 'zod'
import { parseSdkArgs, SDK_USAGE, type SdkCommand } from '../server/args.js'
import { SdkCarrier } from '../server/carrier.js'

export const name = 'sdk-server'
export const inject = ['host', 'launcher']
export const Config = z.object({
  /** Frames longer than this are refused with -32700 (the connection stays up). */
  maxFrameBytes: z.number().int().positive().optional(),
}).default({})

/**
 * `dsh sdk`: serves the launcher's stdio to one client (see SdkCarrier). stdout carries
 * frames only (console.log/info/debug go to stderr while it serves); stdin EOF closes the
 * host connection and exits 0; SIGINT/SIGTERM/SIGHUP do the same with 130/143/129.
 * `--print-schema` prints rpc/describe and exits.
 */
export function apply(ctx: Context, config: z.output<typeof Config>): void {
  const { launcher } = ctx
  const release = launcher.hold()
  const finish = (code: number) => {
    release()
    launcher.exit(code)
  }
  let command: SdkCommand
  try {
    command = parseSdkArgs(launcher.argv)
  } catch (error) {
    launcher.stderr.write(`${formatError(error)}\n`)
    return finish(2)
  }
  if (command.type !== 'serve') {
    launcher.stdout.write(command.type === 'help' ? `${SDK_USAGE}\n` : `${JSON.stringify(describeRpc(), null, 2)}\n`)
    return finish(0)
  }
  launcher.pin('an sdk client is connected (restarting rows would drop its sessions)')
  ctx.effect(() => guardStdout(), 'sdk: console off stdout')
  const { host } = ctx
  const debug = launcher.env.DSH_SDK_DEBUG === '1' ? (line: string) => { launcher.stderr.write(`[sdk] ${line}\n`) } : undefined
  const carrier = new SdkCarrier({
    input: launcher.stdin, output: launcher.stdout, connect: (client) => host.connect(client),
    log: (line) => { launcher.stderr.write(`${line}\n`) }, debug, ...(config.maxFrameBytes ? { maxFrameBytes: config.maxFrameBytes } : {}),
  })
  let code = 0
  ctx.on('launcher/signal', (signal) => {
    code = signal === 'SIGINT' ? 130 : signal === 'SIGHUP' ? 129 : 143
    void carrier.close(signal)
    return true
  })
  void carrier.closed.then(() => finish(code))
  ctx.effect(() => () => carrier.close('the sdk row was disposed'), 'sdk: close stdio connection')
}

/** Sends console.log/info/debug to stderr; returns the undo. */
function guardStdout(): () => void {
  const saved = { log: console.log, info: console.info, debug: console.debug }
  console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args)
  return () => Object.assign(console, saved)
}
