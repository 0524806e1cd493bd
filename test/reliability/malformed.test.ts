import * as acp from '@agentclientprotocol/sdk'
import { spawn } from 'node:child_process'
import { startMockModel, type MockModel } from '@dsh/testkit'
import { afterAll, beforeAll, expect } from 'vitest'
import { harness } from '../../packages/acp/test/harness.js'
import { acpEnv } from '../e2e/helpers/acp.js'
import { cleanEnv, DSH_BIN } from '../e2e/helpers/dsh.js'
import { answerMismatches, answersById, generateFrames, type Frame } from './frames.js'
import { defineLane, laneSeed, rssOf, scaled } from './lib.js'

// malformed-frames lane: fast-check frames into the ACP server in process and through the
// stdio of real children; exactly one answer per request id, zero crashes, bounded memory,
// short error messages. A carrier is one entry of CARRIERS.
const lane = defineLane('frames')
const seed = laneSeed('frames')
const PROBE = { jsonrpc: '2.0', id: 'probe', method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }
/** An error reply quotes at most a short prefix of bad input (issue 12 item 8). */
const MAX_ERROR_FRAME = 16 * 1024

/** A running server reachable by lines: what it sent back so far, and its pid when it is a child. */
interface Carrier {
  send(line: string): Promise<void>
  received: unknown[]
  /** Lines it sent that were not JSON. */
  junk: string[]
  pid?: number
  /** Resolves (with how it ended) if the server exits on its own. */
  exited: Promise<string>
  close(): Promise<string>
}

function lineReader(onLine: (line: string) => void): (chunk: string) => void {
  let buffer = ''
  return (chunk) => {
    buffer += chunk
    let nl: number
    while ((nl = buffer.indexOf('\n')) >= 0) {
      onLine(buffer.slice(0, nl))
      buffer = buffer.slice(nl + 1)
    }
  }
}

function collectLine(c: Pick<Carrier, 'received' | 'junk'>) {
  return (line: string) => {
    if (!line.trim()) return
    try {
      c.received.push(JSON.parse(line))
    } catch {
      c.junk.push(line.slice(0, 200))
    }
  }
}

/** A stdio child speaking NDJSON JSON-RPC (`dsh --profile acp`; the SDK server is one more entry). */
function stdioCarrier(args: string[]): () => Promise<Carrier> {
  return async () => {
    const model = await startMockModel()
    const setup = acpEnv(model.url)
    const child = spawn(DSH_BIN, args, { cwd: setup.cwd, env: cleanEnv(setup.env), stdio: ['pipe', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr!.setEncoding('utf8').on('data', (d: string) => { stderr = (stderr + d).slice(-4000) })
    const carrier: Carrier = {
      received: [], junk: [], pid: child.pid!,
      exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve(`exit ${code} ${signal ?? ''} ${stderr.slice(-600)}`))),
      // the error listener goes with its send (one per send piled up: MaxListenersExceededWarning)
      send: (line) => new Promise((resolve, reject) => {
        const done = () => { child.stdin!.off('error', reject); resolve() }
        child.stdin!.once('error', reject)
        if (!child.stdin!.write(line + '\n')) child.stdin!.once('drain', done)
        else done()
      }),
      async close() {
        child.stdin!.end()
        const how = await Promise.race([carrier.exited, new Promise<string>((r) => setTimeout(() => r('timeout'), 15_000))])
        if (how === 'timeout') child.kill('SIGKILL')
        await model.close()
        return how
      },
    }
    child.stdout!.setEncoding('utf8').on('data', lineReader(collectLine(carrier)))
    child.stdin!.on('error', () => undefined)
    return carrier
  }
}

/** The ACP server of the real in-process tree, fed bytes through the SDK's NDJSON stream. */
async function inProcessCarrier(): Promise<Carrier> {
  // the SDK reports each bad frame with console.error; thousands of lines help no one
  const consoleError = console.error
  console.error = () => undefined
  const h = await harness()
  const input = new TransformStream<Uint8Array, Uint8Array>()
  const output = new TransformStream<Uint8Array, Uint8Array>()
  const server = h.root.acpServer.connect(acp.ndJsonStream(output.writable, input.readable))
  const writer = input.writable.getWriter()
  const carrier: Carrier = {
    received: [], junk: [],
    exited: new Promise(() => undefined),
    send: async (line) => { await writer.write(new TextEncoder().encode(line + '\n')) },
    async close() {
      await writer.close().catch(() => undefined)
      await server.close()
      await h.close()
      console.error = consoleError
      return 'closed'
    },
  }
  const decoder = new TextDecoder()
  const read = lineReader(collectLine(carrier))
  void (async () => {
    for await (const chunk of output.readable) read(decoder.decode(chunk, { stream: true }))
  })()
  return carrier
}

const CARRIERS: { name: string; start: () => Promise<Carrier>; frames: number; memory: boolean }[] = [
  { name: 'in process (ACP server)', start: inProcessCarrier, frames: scaled(20_000), memory: false },
  { name: 'stdio child: dsh --profile acp', start: stdioCarrier(['--profile', 'acp']), frames: scaled(2_000), memory: true },
  { name: 'stdio child: dsh sdk', start: stdioCarrier(['sdk']), frames: scaled(2_000), memory: true },
]

async function until(predicate: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs
  while (!predicate()) {
    if (Date.now() > end) return false
    await new Promise((r) => setTimeout(r, 50))
  }
  return true
}

let model: MockModel
beforeAll(async () => { model = await startMockModel() })
afterAll(async () => { await model.close() })

CARRIERS.forEach((carrierSpec, index) => {
  lane.case(`${carrierSpec.name}: ${carrierSpec.frames} malformed frames, one answer per request id, no crash${carrierSpec.memory ? ', bounded memory' : ''}`, async () => {
    const frames: Frame[] = generateFrames(seed + index, carrierSpec.frames, { huge: carrierSpec.memory })
    const c = await carrierSpec.start()
    let crashed: string | undefined
    void c.exited.then((how) => { crashed = how })
    try {
      await c.send(JSON.stringify(PROBE))
      expect(await until(() => answersById(c.received).has('probe') || crashed !== undefined, 30_000), 'no answer to initialize').toBe(true)
      const rssStart = c.pid ? rssOf(c.pid) : 0
      let rssPeak = rssStart
      const sampler = c.pid ? setInterval(() => { try { rssPeak = Math.max(rssPeak, rssOf(c.pid!)) } catch { /* exited */ } }, 100) : undefined
      for (const f of frames) {
        if (crashed !== undefined) break
        await c.send(f.line)
      }
      const final = { ...PROBE, id: 'probe-final' }
      await c.send(JSON.stringify(final))
      const expected = frames.filter((f) => f.id !== undefined)
      await until(() => crashed !== undefined || (answersById(c.received).has('probe-final') && answerMismatches(expected, answersById(c.received)).length === 0), 120_000)
      clearInterval(sampler)
      expect(crashed, 'the server ended during the storm').toBeUndefined()
      const answers = answersById(c.received)
      expect(answers.get('probe-final'), 'the server stopped answering').toBe(1)
      const mismatches = answerMismatches(expected, answers)
      expect(mismatches.slice(0, 10), `${mismatches.length} request ids without exactly one answer`).toEqual([])
      expect(c.junk, 'non-JSON lines on the protocol stream').toEqual([])
      const long = c.received.filter((f) => typeof f === 'object' && f !== null && 'error' in f).map((f) => JSON.stringify(f)).filter((s) => s.length > MAX_ERROR_FRAME)
      expect(long.map((s) => `${s.length} bytes: ${s.slice(0, 400)}`), 'error replies echoing bad input at length').toEqual([])
      if (c.pid) {
        await new Promise((r) => setTimeout(r, 3000))
        const rssAfter = rssOf(c.pid)
        process.stdout.write(`reliability frames: ${carrierSpec.name}: RSS ${mb(rssStart)} MB at start, ${mb(rssPeak)} MB peak, ${mb(rssAfter)} MB 3 s after\n`)
        expect(rssPeak - rssStart, 'RSS grew without bound during the storm').toBeLessThan(400 * 2 ** 20)
        expect(rssAfter - rssStart, 'memory did not return near its start after the storm').toBeLessThan(100 * 2 ** 20)
      }
    } finally {
      const how = await c.close()
      if (c.pid) expect(how, 'the child did not exit cleanly at EOF').toMatch(/^exit 0 /)
    }
  }, 300_000)
})

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0)
