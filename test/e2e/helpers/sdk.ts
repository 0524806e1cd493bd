// A raw `dsh sdk` peer, as a program written elsewhere would drive it: bytes on stdin,
// NDJSON frames on stdout (every stdout line must be JSON-RPC), stderr kept for checks.
import type { ChildProcess } from 'node:child_process'
import { spawnDsh } from './dsh.js'

export interface RawSdk {
  child: ChildProcess
  frames: Record<string, any>[]
  /** stdout lines that were not JSON (must stay empty). */
  junk: string[]
  stderr(): string
  write(text: string | Buffer): void
  send(message: unknown): void
  /** Sends a request and resolves with its response frame (result or error). */
  request(method: string, params?: unknown): Promise<Record<string, any>>
  /** Resolves with the first frame (already received or future) that matches. */
  waitFor(predicate: (frame: Record<string, any>) => boolean, what?: string, ms?: number): Promise<Record<string, any>>
  initialize(capabilities?: Record<string, boolean>): Promise<Record<string, any>>
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

export function spawnSdk(env: Record<string, string | undefined>, cwd?: string): RawSdk {
  const child = spawnDsh(['sdk'], { env, ...(cwd ? { cwd } : {}) })
  const frames: Record<string, any>[] = []
  const junk: string[] = []
  let stderr = ''
  let buffered = Buffer.alloc(0)
  const waiters = new Set<() => void>()
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk])
    let nl
    while ((nl = buffered.indexOf(0x0a)) >= 0) {
      const line = buffered.subarray(0, nl).toString('utf8')
      buffered = buffered.subarray(nl + 1)
      try {
        frames.push(JSON.parse(line) as Record<string, any>)
      } catch {
        junk.push(line)
      }
    }
    for (const w of waiters) w()
  })
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  child.stdin!.on('error', () => undefined)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })))
  let nextId = 1000
  const sdk: RawSdk = {
    child, frames, junk,
    stderr: () => stderr,
    write: (text) => { child.stdin!.write(text) },
    send: (message) => { child.stdin!.write(`${JSON.stringify(message)}\n`) },
    waitFor(predicate, what = 'a frame', ms = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = frames.find(predicate)
          if (!found) return
          waiters.delete(check)
          clearTimeout(timer)
          resolve(found)
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`timed out waiting for ${what}; stderr: ${stderr.slice(-2000)}`))
        }, ms)
        waiters.add(check)
        check()
      })
    },
    async request(method, params) {
      const id = nextId++
      sdk.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) })
      return sdk.waitFor((f) => f.id === id && !('method' in f), `the answer to ${method}`)
    },
    initialize: (capabilities = {}) => sdk.request('initialize', { protocolVersion: 1, client: { name: 'raw', version: '1' }, capabilities }),
    exited,
  }
  return sdk
}
