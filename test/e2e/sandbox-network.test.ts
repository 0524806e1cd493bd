import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { tempDir } from './helpers/dsh.js'
import { sessionIdOf } from './helpers/session-file.js'
import { useDshWorld } from './helpers/world.js'

// Issue 12 item 6b/6c through the built binary: no network in the sandbox by default (a setting
// allows it), and temp roots per user that a failed run does not leave behind.
const world = useDshWorld({ logsCheck: false })
let listener: Server
let port: number
let accepted = 0
let tmp: string

const headless = (args: string[]) => world.headless(args, { env: { TMPDIR: tmp } })
const connect = () => `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`

beforeAll(async () => {
  listener = createServer((socket) => { accepted++; socket.end('reached the host\n') })
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
  port = (listener.address() as { port: number }).port
})
afterAll(async () => {
  await new Promise((resolve) => listener.close(resolve))
})
beforeEach(() => {
  tmp = tempDir('dsh-tmp-')
})

const lastToolText = () => {
  const messages = (world.model.requests.at(-1)!.body as { messages: { role: string; content: string }[] }).messages
  return messages.filter((m) => m.role === 'tool').at(-1)!.content
}

describe('network and temp roots of sandboxed commands', () => {
  it.each(['read-only', 'workspace-write'])('%s: a listener on 127.0.0.1 receives no connection', async (mode) => {
    world.model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: connect() } }] }, { text: 'ok' }])
    const before = accepted
    const run = await headless(['--permission-mode', mode, 'call the server'])
    expect(run.code).toBe(0)
    expect(accepted).toBe(before)
    expect(lastToolText()).not.toContain('reached the host')
  })

  it('the permission row setting network: true lets sandboxed commands connect', async () => {
    writeFileSync(join(world.home, 'cordis.patch.yml'), '- id: permission\n  config: {network: true}\n')
    world.model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: connect() } }] }, { text: 'ok' }])
    const before = accepted
    const run = await headless(['call the server'])
    expect(run.code).toBe(0)
    expect(lastToolText()).toContain('reached the host')
    expect(accepted).toBe(before + 1)
  })

  it('headless cannot approve network: true; the model is told and nothing connects', async () => {
    world.model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: connect(), network: true, justification: 'needs the dev server' } }] }, { text: 'ok' }])
    const before = accepted
    expect((await headless(['call the server'])).code).toBe(0)
    expect(lastToolText()).toContain('No one can approve a command that would use the network')
    expect(accepted).toBe(before)
  })

  it('commands get a per-user 0700 temp root; it is gone after the run, and a failed resume leaves no folder', async () => {
    world.model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: 'echo "$TMPDIR"; stat -c %a "$TMPDIR" "$(dirname "$TMPDIR")"' } }] }, { text: 'ok' }])
    const run = await headless(['where is tmp'])
    expect(run.code).toBe(0)
    const id = sessionIdOf(run.stderr)
    const base = join(tmp, `dsh-${process.getuid!()}`)
    expect(lastToolText()).toBe(`${join(base, id)}\n700\n700`)
    expect(readdirSync(base)).toEqual([])
    // a resume that fails (the session is locked by a live writer) creates nothing under the base
    mkdirSync(join(world.home, 'sessions'), { recursive: true })
    writeFileSync(join(world.home, 'sessions', `${id}.lock`), JSON.stringify({ pid: process.pid, host: (await import('node:os')).hostname(), started: Date.now() }))
    const locked = await headless(['--resume', id, 'again'])
    expect(locked.stderr).toContain('SESSION_LOCKED')
    rmSync(join(world.home, 'sessions', `${id}.lock`))
    // and one whose workspace (cwd "/") is refused under workspace-write
    const refused = await world.headless(['hi'], { cwd: '/', env: { TMPDIR: tmp } })
    expect(refused.stderr).toContain('UNSAFE_WORKSPACE')
    expect(readdirSync(base)).toEqual([])
    expect(existsSync(join(tmp, 'dsh'))).toBe(false)
  })
})
