import type { Context } from '@deepseek-ai/cordis'
import type { HostClient, HostConnection } from '@dsh/host'
import { formatError } from '@dsh/protocol'
import { fileURLToPath } from 'node:url'
import { z } from 'zod'
import { WEB_HELP, parseWebArgs } from '../args.js'
import { openBrowser, startWebServer } from '../server.js'

export const name = 'web'
export const inject = ['launcher', 'host']
export const Config = z.object({}).default({})

interface HostService { connect(client: HostClient): HostConnection | Promise<HostConnection> }

/** Claims the process and serves the UI until SIGINT/SIGTERM, then drains and exits 0. */
export function apply(ctx: Context): void {
  const launcher = ctx.launcher
  const release = launcher.hold()
  const parsed = parseWebArgs(launcher.argv)
  if (parsed.type !== 'run') {
    if (parsed.type === 'help') launcher.stdout.write(WEB_HELP)
    else launcher.stderr.write(`USAGE: ${parsed.message}\n  hint: dsh web --help\n`)
    release()
    launcher.exit(parsed.type === 'help' ? 0 : 2)
    return
  }
  const fixedToken = launcher.env.DSH_WEB_TOKEN
  if (fixedToken !== undefined && !/^[0-9a-f]{64}$/.test(fixedToken)) {
    launcher.stderr.write('USAGE: DSH_WEB_TOKEN must be 64 lowercase hex digits (256 bits), e.g. from `openssl rand -hex 32`\n')
    release()
    launcher.exit(2)
    return
  }
  const host = (ctx as unknown as { host: HostService }).host
  const assetsDir = fileURLToPath(new URL('../ui/', import.meta.url))
  startWebServer({ args: parsed.args, connect: (c) => host.connect(c), assetsDir, env: launcher.env, cwd: launcher.cwd, ...(fixedToken ? { token: fixedToken } : {}) }).then((server) => {
    ctx.launcher.pin('dsh web serves open browser tabs')
    launcher.stdout.write(`dsh web: ${server.url}\n`)
    if (parsed.args.open) openBrowser(server.url, launcher.env)
    let stopping = false
    ctx.on('launcher/signal', () => {
      if (stopping) return
      stopping = true
      const force = setTimeout(() => { release(); launcher.exit(0) }, 4_000)
      force.unref()
      void server.close().finally(() => {
        clearTimeout(force)
        release()
        launcher.exit(0)
      })
    })
    ctx.effect(() => () => { void server.close() })
  }, (error: unknown) => {
    launcher.stderr.write(formatError(error) + '\n')
    release()
    launcher.exit(1)
  })
}
