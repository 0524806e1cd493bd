import { createServer, type Server } from 'node:net'
import type { Context } from '@deepseek-ai/cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callTool, cleanupDirs, harness, toolTree, type Harness } from './helpers.js'

// Issue 12 item 6b: sandboxed commands get no network by default; a call may ask for it.
let root: Context
let server: Server
let port: number
let accepted = 0

beforeAll(async () => {
  root = await toolTree()
  server = createServer((socket) => { accepted++; socket.end('hello from the host\n') })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as { port: number }).port
})
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
  await root.fiber.dispose()
  cleanupDirs()
})

const connect = () => `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3 && echo connected`

async function sandboxed(mode: 'read-only' | 'workspace-write'): Promise<Harness> {
  const h = await harness(root, mode)
  h.policy = { ...h.policy, network: false }
  return h
}

describe('network in the sandbox', () => {
  it.each(['read-only', 'workspace-write'] as const)('%s: a listener on 127.0.0.1 is out of reach and receives no connection', async (mode) => {
    const h = await sandboxed(mode)
    const before = accepted
    const r = await callTool(h, 'bash', { command: connect() })
    expect(r.text).not.toContain('connected')
    expect(r.text).toMatch(/\[exit code: 1\]$/)
    expect(accepted).toBe(before)
  })

  it('network: true asks with a net: scope; allowed, that call connects, the next one does not', async () => {
    const h = await sandboxed('workspace-write')
    h.answer = 'allow-once'
    const before = accepted
    const r = await callTool(h, 'bash', { command: connect(), network: true, justification: 'talk to the dev server' })
    expect(r.text).toBe('hello from the host\nconnected')
    expect(accepted).toBe(before + 1)
    expect(h.approvals.at(-1)).toMatchObject({ kind: 'escalation', reason: 'talk to the dev server', scope: { key: `net:bash:${connect()}` } })
    const next = await callTool(h, 'bash', { command: connect() })
    expect(next.text).not.toContain('connected')
    expect(accepted).toBe(before + 1)
  })

  it('network: true rejected (or without a justification) runs nothing', async () => {
    const h = await sandboxed('workspace-write')
    const before = accepted
    h.answer = 'reject'
    expect((await callTool(h, 'bash', { command: connect(), network: true, justification: 'x' })).text).toContain('did not allow this command to use the network')
    expect((await callTool(h, 'bash', { command: connect(), network: true })).text).toContain('network: true needs a justification')
    expect(accepted).toBe(before)
  })
})
