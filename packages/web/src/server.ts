import { spawn } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { HostClient, HostConnection } from '@dsh/host'
import { DshError } from '@dsh/protocol'
import type { WebArgs } from './args.js'
import { newToken } from './fence.js'
import { createGateway, type Gateway } from './gateway.js'
import { WebHub } from './hub.js'
import { loadAssets } from './static.js'

export interface WebServerOptions {
  args: WebArgs
  connect(client: HostClient): HostConnection | Promise<HostConnection>
  /** The built UI directory (dist/ui). */
  assetsDir: string
  env: Record<string, string | undefined>
  /** Where the folder browser starts (the launch directory). */
  cwd: string
  token?: string
  /** Default HEARTBEAT_MS. */
  heartbeatMs?: number
}

export interface WebServer {
  url: string
  port: number
  gateway: Gateway
  hub: WebHub
  /** Drains: ends every stream, refuses pending requests, closes the connection (cancels turns, flushes logs), stops listening. */
  close(): Promise<void>
}

export const HEARTBEAT_MS = 15_000

export async function startWebServer(opts: WebServerOptions): Promise<WebServer> {
  const token = opts.token ?? newToken()
  const hub = new WebHub()
  const connection = await opts.connect(hub)
  let port = opts.args.port
  const gateway = createGateway({ port: () => port, token, connection, hub, assets: loadAssets(opts.assetsDir), cwd: opts.cwd })
  const server: Server = createServer((req, res) => gateway.handle(req, res))
  server.keepAliveTimeout = 5_000
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(opts.args.port, opts.args.host, () => { server.off('error', reject); resolve() })
    })
  } catch (error) {
    await connection.close().catch(() => undefined)
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EADDRINUSE') throw new DshError('PORT_IN_USE', `port ${opts.args.port} on ${opts.args.host} is already in use`, { hint: 'pick another with --port N, or --port 0 for a free one' })
    throw new DshError('LISTEN_FAILED', `cannot listen on ${opts.args.host}:${opts.args.port}: ${(error as Error).message}`, { cause: error })
  }
  port = (server.address() as AddressInfo).port
  const hostName = opts.args.host === '::1' ? '[::1]' : opts.args.host
  const url = `http://${hostName}:${port}/?token=${token}`
  const heartbeat = setInterval(() => {
    const frame = { time: Date.now() }
    for (const s of hub.hostStreams) s.send('heartbeat', frame)
    for (const l of hub.sessions) l.stream.send('heartbeat', frame)
  }, opts.heartbeatMs ?? HEARTBEAT_MS)
  heartbeat.unref()
  let closing: Promise<void> | undefined
  const close = () => closing ??= (async () => {
    clearInterval(heartbeat)
    gateway.shutDown()
    server.close()
    for (const s of hub.hostStreams) s.end()
    for (const l of hub.sessions) l.stream.end()
    hub.rejectAll()
    await connection.close().catch(() => undefined)
    server.closeAllConnections()
  })()
  return { url, port, gateway, hub, close }
}

/** Opens the URL in a browser when there is a display; failures are ignored. */
export function openBrowser(url: string, env: Record<string, string | undefined>): void {
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? null : (env.DISPLAY || env.WAYLAND_DISPLAY) ? 'xdg-open' : null
  if (!opener) return
  try {
    const child = spawn(opener, [url], { stdio: 'ignore', detached: true })
    child.on('error', () => undefined)
    child.unref()
  } catch {
    // no opener: the printed URL is enough
  }
}
