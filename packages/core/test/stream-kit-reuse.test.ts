import { createServer, globalAgent, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { postSse } from '../src/llm/stream-kit.js'

// A consumer (an adapter) stops at its protocol's last event, before the body's end arrives:
// the connection must go back to the agent for the next request, not be torn down each step.
let server: Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined))
  server = undefined
})

/** A server answering each POST with `data: 1`, `data: last`, then `finish(res)`. */
async function serve(finish: (res: ServerResponse) => void): Promise<{ url: string; sockets: Socket[] }> {
  const sockets: Socket[] = []
  server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('data: 1\n\ndata: last\n\n')
      finish(res)
    })
  })
  server.on('connection', (socket) => sockets.push(socket))
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`, sockets }
}

async function readUntilLast(url: string, signal = new AbortController().signal): Promise<string[]> {
  const seen: string[] = []
  for await (const event of postSse({ url, headers: {}, body: {}, signal, idleTimeoutMs: 10_000, provider: 'p', apiKey: 'k' })) {
    seen.push(event.data)
    if (event.data === 'last') break
  }
  return seen
}

/** Resolves once the agent holds an idle socket (the previous body was read to its end). */
async function released(): Promise<void> {
  while (Object.values(globalAgent.freeSockets).every((list) => !list?.length)) await new Promise((resolve) => setTimeout(resolve, 5))
}

const closed = (socket: Socket): Promise<void> => socket.destroyed ? Promise.resolve() : new Promise((resolve) => socket.once('close', () => resolve()))

describe('postSse releases the connection when the consumer stops at an event', () => {
  it('the body ending after the consumer stopped: the next request reuses the connection', async () => {
    const { url, sockets } = await serve((res) => setTimeout(() => res.end(), 30))
    for (let i = 0; i < 3; i++) {
      expect(await readUntilLast(url)).toEqual(['1', 'last'])
      await released() // the step between two requests (tools run) is longer than the rest of the body
    }
    expect(sockets).toHaveLength(1)
  })

  it('a body that never ends after the last event is torn down (no socket kept, nothing hangs)', async () => {
    const { url, sockets } = await serve(() => { /* never ends */ })
    expect(await readUntilLast(url)).toEqual(['1', 'last'])
    await closed(sockets[0]!) // torn down by the client after the settle time
    expect(await readUntilLast(url)).toEqual(['1', 'last'])
    expect(sockets).toHaveLength(2)
  })

  it('the caller aborting while it holds an event tears the connection down at once', async () => {
    const { url, sockets } = await serve((res) => setTimeout(() => res.end(), 30))
    const controller = new AbortController()
    const seen: string[] = []
    for await (const event of postSse({ url, headers: {}, body: {}, signal: controller.signal, idleTimeoutMs: 10_000, provider: 'p', apiKey: 'k' })) {
      seen.push(event.data)
      controller.abort()
      break
    }
    expect(seen).toEqual(['1'])
    await closed(sockets[0]!)
    expect(await readUntilLast(url)).toEqual(['1', 'last'])
    expect(sockets).toHaveLength(2)
  })
})
