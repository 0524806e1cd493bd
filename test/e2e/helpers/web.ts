import type { ChildProcess } from 'node:child_process'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { spawnDsh, waitForOutput } from './dsh.js'

/** Debian's Chromium, never a downloaded browser (flags from shared/NOTES.md). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    headless: true,
  })
}

export interface WebRun {
  child: ChildProcess
  url: string
  port: number
  token: string
  stdout(): string
  stderr(): string
  /** SIGINT, then the exit code (SIGKILL after 10 s). */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** Starts the built `dsh web --port 0 --no-open` and reads its first stdout line. */
export async function startWeb(opts: { cwd: string; env: Record<string, string | undefined>; args?: string[] }): Promise<WebRun> {
  const child = spawnDsh(['web', '--no-open', ...(opts.args ?? ['--port', '0'])], { cwd: opts.cwd, env: opts.env })
  child.stdin!.end()
  let out = ''
  let err = ''
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d })
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d })
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  const first = await Promise.race([
    waitForOutput(child.stdout!, (t) => t.includes('\n'), 30_000),
    exited.then((code) => { throw new Error(`dsh web exited ${code} before printing its URL: ${err}`) }),
  ])
  const line = first.split('\n')[0]!
  const m = /^dsh web: (http:\/\/127\.0\.0\.1:(\d+)\/\?token=([0-9a-f]{64}))$/.exec(line)
  if (!m) throw new Error(`unexpected first stdout line: ${JSON.stringify(line)}`)
  return {
    child, url: m[1]!, port: Number(m[2]), token: m[3]!, stdout: () => out, stderr: () => err,
    async stop(signal = 'SIGINT') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000)
      child.kill(signal)
      const code = await exited
      clearTimeout(kill)
      return code
    },
  }
}

/** A page that fails its test on any page error or console error. */
export async function watchedPage(context: BrowserContext, errors: string[], allow: RegExp[] = []): Promise<Page> {
  const page = await context.newPage()
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`))
  page.on('console', (m) => { if (m.type() === 'error' && !allow.some((r) => r.test(m.text()))) errors.push(`console: ${m.text()}`) })
  return page
}

/** POST /api/<method> with the bearer token, as a script would. */
export async function api(run: WebRun, method: string, params: unknown): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${run.port}/api/${method}`, {
    method: 'POST', headers: { Authorization: `Bearer ${run.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(params),
  })
  const body = await res.json() as { result?: unknown; error?: { message: string } }
  if (body.error) throw new Error(`${method}: ${body.error.message}`)
  return body.result
}
