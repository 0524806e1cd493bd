import { afterEach, beforeEach, expect } from 'vitest'
import { startMockModel, type MockModel, type Script } from '@dsh/testkit'
import { expectModelSawOnlyLogs } from './session-file.js'
// Drives the built `dsh --profile acp` over stdio with the official ACP SDK client, as an
// editor would. Every raw stdout line is kept too (stdout must carry JSON-RPC only).
import * as acp from '@agentclientprotocol/sdk'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { z } from 'zod'
import { cleanEnv, DSH_BIN, ROOT, tempDir } from './dsh.js'

export { acp }

/**
 * What the SDK client reported about messages that failed its schema validation (it logs
 * them with console.error and drops them). Tests assert this stays empty.
 */
export const protocolErrors: string[] = []
const consoleError = console.error.bind(console)
console.error = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && /^(Error handling notification|Invalid message|Error handling request)/.test(args[0])) protocolErrors.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '))
  consoleError(...args)
}

export interface AcpProcess {
  child: ChildProcess
  /** The client side: call `agent.request(...)` / `agent.notify(...)`. */
  agent: acp.ClientContext
  connection: acp.ClientConnection
  /** Every `session/update`, in arrival order. */
  updates: acp.SessionNotification[]
  /** Every permission request received. */
  permissions: acp.RequestPermissionRequest[]
  /** How the next permission requests are answered (default: allow once). */
  answer: (request: acp.RequestPermissionRequest, signal: AbortSignal) => Promise<acp.RequestPermissionResponse> | acp.RequestPermissionResponse
  /** Answers `elicitation/create` (default: decline). */
  elicit: (request: acp.CreateElicitationRequest, signal: AbortSignal) => Promise<acp.CreateElicitationResponse> | acp.CreateElicitationResponse
  /** Ids of `elicitation/complete` notifications received. */
  completedElicitations: string[]
  /** Raw stdout lines, parsed (every line must be JSON). */
  frames: unknown[]
  /** Lines of stdout that were not JSON (must stay empty). */
  junk: string[]
  /** Frames from the agent that break the ACP schema (must stay empty). */
  violations: string[]
  stderr(): string
  /** Writes raw bytes to the agent's stdin (malformed input tests). */
  writeRaw(text: string): void
  /** Resolves with the exit code once the process exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  initialize(caps?: acp.ClientCapabilities): Promise<acp.InitializeResponse>
  /** Ends stdin (EOF), then waits for the exit. */
  end(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

export interface AcpEnv {
  home: string
  cwd: string
  env: Record<string, string>
}

type Schema = { safeParse(value: unknown): { success: boolean; error?: { message: string } } }
const schemas = new Map<string, Schema | null>()
/**
 * A definition of the ACP v1 JSON schema shipped with the SDK, as a strict validator
 * (the SDK's own client is lenient: it drops or defaults what it cannot read). Updates
 * and client requests are checked against the stable schema (what every editor reads);
 * responses against the full one (`usage`, `session/fork` are unstable).
 */
function schema(name: string, unstable = false): Schema | null {
  const key = `${unstable ? 'u' : 's'}:${name}`
  let found = schemas.get(key)
  if (found === undefined) {
    const file = join(ROOT, 'node_modules', '@agentclientprotocol', 'sdk', 'schema', 'v1', unstable ? 'schema.unstable.json' : 'schema.json')
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { $schema: string; $defs: Record<string, unknown> }
    try {
      found = z.fromJSONSchema({ $schema: doc.$schema, $ref: `#/$defs/${name}`, $defs: doc.$defs } as never) as Schema
    } catch {
      // zod cannot express this definition (e.g. `not`): the SDK client's own parse is all there is
      found = null
    }
    schemas.set(key, found)
  }
  return found
}

const FROM_AGENT: Record<string, string> = {
  'session/update': 'SessionNotification', 'session/request_permission': 'RequestPermissionRequest',
  'elicitation/create': 'CreateElicitationRequest', 'elicitation/complete': 'CompleteElicitationNotification',
}
const RESPONSES: Record<string, string> = {
  initialize: 'InitializeResponse', authenticate: 'AuthenticateResponse', logout: 'LogoutResponse',
  'session/new': 'NewSessionResponse', 'session/load': 'LoadSessionResponse', 'session/resume': 'ResumeSessionResponse',
  'session/list': 'ListSessionsResponse', 'session/close': 'CloseSessionResponse', 'session/fork': 'ForkSessionResponse',
  'session/set_mode': 'SetSessionModeResponse', 'session/set_config_option': 'SetSessionConfigOptionResponse', 'session/prompt': 'PromptResponse',
}

/** What is wrong with one frame from the agent, if anything. */
function checkFrame(frame: Record<string, unknown>, sent: Map<unknown, string>): string | undefined {
  if (frame.jsonrpc !== '2.0') return 'not JSON-RPC 2.0'
  const method = typeof frame.method === 'string' ? frame.method : undefined
  let verdict: { success: boolean; error?: { message: string } } | undefined
  if (method) {
    if (method.startsWith('_') || method.startsWith('$/')) return undefined
    const name = FROM_AGENT[method]
    if (!name) return `unexpected method ${method}`
    verdict = schema(name)?.safeParse(frame.params)
  } else if ('error' in frame) {
    const error = frame.error as { code?: unknown; message?: unknown }
    if (typeof error?.code !== 'number' || typeof error.message !== 'string') return 'malformed error'
    return undefined
  } else {
    const request = sent.get(frame.id)
    const name = request ? RESPONSES[request] : undefined
    if (!name) return undefined
    verdict = schema(name, true)?.safeParse(frame.result)
  }
  return !verdict || verdict.success ? undefined : `${method ?? `response to ${sent.get(frame.id)}`}: ${verdict.error?.message ?? 'invalid'}`
}

/** A fresh $DSH_HOME and workspace, and the environment pointing DeepSeek at `modelUrl`. */
export function acpEnv(modelUrl: string, extra: Record<string, string> = {}): AcpEnv {
  const base = tempDir('dsh-acp-e2e-')
  const home = join(base, 'home')
  const cwd = join(base, 'ws')
  mkdirSync(home)
  mkdirSync(cwd)
  return { home, cwd, env: { DSH_HOME: home, HOME: base, DEEPSEEK_BASE_URL: modelUrl, DEEPSEEK_API_KEY: 'mock', ...extra } }
}

/** Spawns `dsh --profile acp` (or another argv, e.g. the dsh-acp bin) and connects the SDK client. */
export function startAcp(setup: AcpEnv, args: string[] = ['--profile', 'acp'], bin: string[] = [DSH_BIN]): AcpProcess {
  const [command, ...prefix] = bin
  const child = spawn(command!, [...prefix, ...args], { cwd: setup.cwd, env: cleanEnv(setup.env), stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  const frames: unknown[] = []
  const junk: string[] = []
  const violations: string[] = []
  /** Request id → method, of what the client sent. */
  const sent = new Map<unknown, string>()
  let partial = ''
  child.stdout!.on('data', (d: Buffer) => {
    partial += d.toString('utf8')
    const lines = partial.split('\n')
    partial = lines.pop()!
    for (const line of lines) {
      if (!line.trim()) continue
      let frame: Record<string, unknown>
      try {
        frame = JSON.parse(line) as Record<string, unknown>
      } catch {
        junk.push(line)
        continue
      }
      frames.push(frame)
      try {
        const problem = checkFrame(frame, sent)
        if (problem) violations.push(problem)
      } catch (error) {
        violations.push(`could not check a frame: ${String(error)}`)
      }
    }
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  const updates: acp.SessionNotification[] = []
  const permissions: acp.RequestPermissionRequest[] = []
  const stdin = child.stdin!
  const decoder = new TextDecoder()
  const output = new WritableStream<Uint8Array>({
    write: (chunk) => {
      for (const line of decoder.decode(chunk).split('\n')) {
        if (!line.trim()) continue
        try {
          const message = JSON.parse(line) as { id?: unknown; method?: unknown }
          if (message.id !== undefined && typeof message.method === 'string') sent.set(message.id, message.method)
        } catch {
          // raw test input (malformed lines)
        }
      }
      return new Promise<void>((resolve, reject) => stdin.write(chunk, (error) => (error ? reject(error) : resolve())))
    },
  })
  const stream = acp.ndJsonStream(output, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>)
  const proc: AcpProcess = {
    child, updates, permissions, frames, junk, violations, exited,
    answer: () => ({ outcome: { outcome: 'selected', optionId: 'allow-once' } }),
    elicit: () => ({ action: 'decline' }),
    completedElicitations: [],
    stderr: () => stderr,
    writeRaw: (text) => { stdin.write(text) },
    agent: undefined as unknown as acp.ClientContext,
    connection: undefined as unknown as acp.ClientConnection,
    initialize: (caps = {}) => proc.agent.request('initialize', { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: caps }),
    end: async () => {
      stdin.end()
      return exited
    },
  }
  const connection = acp.client({ name: 'dsh-e2e' })
    .onNotification('session/update', (c) => { updates.push(c.params) })
    .onRequest('session/request_permission', async (c) => {
      permissions.push(c.params)
      return proc.answer(c.params, c.signal)
    })
    .onRequest('elicitation/create', async (c) => proc.elicit(c.params, c.signal))
    .onNotification('elicitation/complete', (c) => { proc.completedElicitations.push(c.params.elicitationId) })
    .connect(stream)
  proc.connection = connection
  proc.agent = connection.agent
  return proc
}

/** The updates of one session (without the wrapper). */
export function sessionUpdates(p: AcpProcess, sessionId: string): acp.SessionUpdate[] {
  return p.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update)
}

export async function until(predicate: () => boolean, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  const start = Date.now()
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** The JSON-RPC error of a rejected request. */
export async function rpcError(promise: Promise<unknown>): Promise<{ code: number; message: string; data?: unknown }> {
  try {
    await promise
  } catch (error) {
    if (error instanceof acp.RequestError) return { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) }
    throw error
  }
  throw new Error('expected a JSON-RPC error')
}

/** Pids of live processes whose command line contains `marker` (and whose program is `program`, when given). */
export function processesWith(marker: string, program?: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const raw = readFileSync(join('/proc', entry, 'cmdline'), 'utf8')
      if (program !== undefined && raw.split('\0')[0] !== program) continue
      const cmdline = raw.replace(/\0/g, ' ')
      const state = /^State:\s+(\w)/m.exec(readFileSync(join('/proc', entry, 'status'), 'utf8'))?.[1]
      if (cmdline.includes(marker) && state !== 'Z' && Number(entry) !== process.pid) pids.push(Number(entry))
    } catch {
      // the process went away while reading
    }
  }
  return pids
}

/** The session files of a home. */
export function storedSessions(home: string): string[] {
  const dir = join(home, 'sessions')
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.jsonl')) : []
}

export const DSH_ACP_BIN = join(ROOT, 'node_modules', '.bin', 'dsh-acp')

/**
 * Ends every process a test started (stdin EOF, then SIGKILL after 3 s) and checks what the
 * whole run produced: no non-JSON-RPC output on stdout, no frame violating the ACP schema,
 * no protocol error seen by the client.
 */
export async function stopAll(running: AcpProcess[]): Promise<void> {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.stdin!.end()
      const exited = await Promise.race([p.exited, new Promise((r) => setTimeout(r, 3000, 'timeout'))])
      if (exited === 'timeout') p.child.kill('SIGKILL')
    }
    expect(p.junk).toEqual([])
    expect(p.violations).toEqual([])
  }
  expect(protocolErrors.splice(0)).toEqual([])
}

export interface AcpSuite {
  model: MockModel
  setup: AcpEnv
  running: AcpProcess[]
  /** Sets the model's script (when given), starts `startAcp(setup, args, bin)` and adds it to `running`. */
  start(script?: Script, args?: string[], bin?: string[]): AcpProcess
}

/**
 * The hooks every ACP e2e file shares: a fresh mock model and environment per test; after
 * it, every started process is stopped and checked (`stopAll`) and every request the model
 * saw must be what a stored session log derives. `setup` may be replaced inside a test.
 */
export function useAcpSuite(): AcpSuite {
  const suite: AcpSuite = {
    model: undefined as unknown as MockModel,
    setup: undefined as unknown as AcpEnv,
    running: [],
    start(script, args, bin) {
      if (script) suite.model.setScript(script)
      const p = startAcp(suite.setup, args, bin)
      suite.running.push(p)
      return p
    },
  }
  beforeEach(async () => {
    suite.model = await startMockModel()
    suite.setup = acpEnv(suite.model.url)
  })
  afterEach(async () => {
    await stopAll(suite.running)
    expectModelSawOnlyLogs(suite.setup.home, suite.model)
    await suite.model.close()
  })
  return suite
}
