// In-process harness: the real plugin tree (memory store, mock model) with the ACP server,
// driven by the SDK's own client over an in-memory message stream.
import * as acp from '@agentclientprotocol/sdk/unstable'
import { Context } from '@deepseek-ai/cordis'
import * as agentsPlugin from '@dsh/core/agents'
import * as approvalPlugin from '@dsh/core/approval'
import * as commandsPlugin from '@dsh/core/commands'
import * as credentialsPlugin from '@dsh/core/credentials'
import * as llmPlugin from '@dsh/core/llm'
import * as memoryStore from '@dsh/core/memory-store'
import * as permissionPlugin from '@dsh/core/permission'
import * as promptPlugin from '@dsh/core/prompt'
import * as sessionsPlugin from '@dsh/core/sessions'
import * as settingsPlugin from '@dsh/core/settings'
import * as toolsPlugin from '@dsh/core/tools'
import { defineTool, ToolError, type ToolDefinition } from '@dsh/core'
import type { Json } from '@dsh/protocol'
import * as openaiPlugin from '@dsh/llm-openai/adapter'
import { startMockModel, type MockModel, type Script } from '@dsh/testkit'
import { mkdtempSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { z } from 'zod'
import * as hostPlugin from '@dsh/host/host'
import * as serverPlugin from '../src/plugins/server.js'

/** A command-like tool with a terminal card: prints `lines`, then exits with `code`; `wait` blocks until cancelled. */
export const shTool = defineTool({
  name: 'sh', description: 'Pretend to run a command.',
  parameters: z.object({ command: z.string(), description: z.string().optional(), lines: z.array(z.string()).default([]), code: z.number().int().default(0), wait: z.boolean().optional(), escalate: z.boolean().optional() }),
  async execute(args, call) {
    if (args.escalate) {
      const outcome = await call.requestApproval({ kind: 'escalation', title: args.command, reason: 'needs the network', rawInput: args as unknown as Json, scope: { key: `sh:${args.command}`, label: `run \`${args.command}\` outside the sandbox in this session` } })
      if (outcome !== 'allow-once' && outcome !== 'allow-always') throw new ToolError(`not allowed (${outcome})`)
    }
    for (const line of args.lines) {
      call.progress({ type: 'output', data: `${line}\n` })
      await new Promise((r) => setTimeout(r, 5))
    }
    if (args.wait) await new Promise((resolve) => call.signal.addEventListener('abort', resolve, { once: true }))
    if (call.signal.aborted) return { output: args.lines.join('\n'), signal: 'SIGTERM' }
    return { output: args.lines.join('\n'), code: args.code }
  },
  output: { render: (v: { output: string; code?: number; signal?: string }) => `${v.output}${v.signal ? `\n[killed by signal: ${v.signal}]` : v.code ? `\n[exit code: ${v.code}]` : ''}` },
  presentCall: (args) => ({ card: 'terminal', title: args.command, ...(args.description ? { description: args.description } : {}) }),
  presentResult: (_args, result) => {
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')
    const signal = /\n\[killed by signal: (\w+)\]$/.exec(text)
    const exit = /\n\[exit code: (\d+)\]$/.exec(text)
    const output = text.replace(/\n\[(killed by signal|exit code): [^\]]+\]$/, '')
    return signal ? { card: 'terminal', output, signal: signal[1]! } : { card: 'terminal', output, exitCode: exit ? Number(exit[1]) : 0 }
  },
})

/** An edit tool with a diff card. */
export const editTool = defineTool({
  name: 'edit', description: 'Pretend to edit a file.', kind: 'edit',
  parameters: z.object({ path: z.string(), old: z.string(), new: z.string() }),
  async execute(args) { return `edited ${args.path}` },
  output: { render: (v: string) => v },
  presentCall: (args) => ({ card: 'diff', title: `Edit ${args.path}`, path: args.path, oldText: args.old, newText: args.new }),
  presentResult: (args, result) => ({ card: 'diff', diffs: [{ path: args.path, oldText: args.old, newText: args.new }], text: result.content.map((c) => (c.type === 'text' ? c.text : '')).join('') }),
})

/** Logs a plan like todo_write. */
export const todoTool = defineTool({
  name: 'todo_write', description: 'Plan.', kind: 'think',
  parameters: z.object({ todos: z.array(z.object({ content: z.string(), status: z.enum(['pending', 'in_progress', 'completed']) })) }),
  async execute(args, call) {
    call.log('todo/write', { todos: args.todos }, { ignorable: true })
    return `${args.todos.length} items`
  },
  output: { render: (v: string) => v },
})

export interface HarnessOptions {
  script?: Script
  clientCapabilities?: acp.ClientCapabilities
  /** Answers permission requests (default: allow once). */
  permission?: (request: acp.RequestPermissionRequest) => Promise<acp.RequestPermissionResponse> | acp.RequestPermissionResponse
  tools?: ToolDefinition<any, any>[]
  serverConfig?: Record<string, unknown>
  commands?: boolean
  /** Leave DEEPSEEK_API_KEY unset. */
  noKey?: boolean
}

export interface Harness {
  root: Context
  model: MockModel
  agent: acp.ClientContext
  /** Every session/update received, in order. */
  updates: acp.SessionNotification[]
  permissions: acp.RequestPermissionRequest[]
  cwd: string
  home: string
  initialize(caps?: acp.ClientCapabilities): Promise<acp.InitializeResponse>
  newSession(): Promise<acp.NewSessionResponse>
  close(): Promise<void>
}

function memoryStreams(): [acp.Stream, acp.Stream] {
  const toAgent = new TransformStream<acp.AnyMessage, acp.AnyMessage>()
  const toClient = new TransformStream<acp.AnyMessage, acp.AnyMessage>()
  return [{ readable: toAgent.readable, writable: toClient.writable }, { readable: toClient.readable, writable: toAgent.writable }]
}

const ENV_KEYS = ['DEEPSEEK_API_KEY', 'DEEPSEEK_BASE_URL'] as const

export async function harness(options: HarnessOptions = {}): Promise<Harness> {
  const saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]))
  const model = await startMockModel({ script: options.script ?? [] })
  if (options.noKey) delete process.env.DEEPSEEK_API_KEY
  else process.env.DEEPSEEK_API_KEY = 'mock-key'
  process.env.DEEPSEEK_BASE_URL = model.url
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-acp-home-')))
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-acp-ws-')))
  const root = new Context()
  const mount = (plugin: object, config?: unknown) => root.plugin(plugin as never, config as never)
  await mount(memoryStore)
  await mount(sessionsPlugin)
  await mount(settingsPlugin, { file: join(home, 'settings.yaml') })
  await mount(credentialsPlugin, { file: join(home, '.credentials.yaml') })
  await mount(llmPlugin, {})
  await mount(openaiPlugin)
  await mount(toolsPlugin)
  await mount(promptPlugin, { projectInstructions: false })
  await mount(permissionPlugin, { default: 'workspace-write' })
  await mount(approvalPlugin)
  await mount(agentsPlugin, { maxSteps: 20 })
  if (options.commands) await mount(commandsPlugin)
  for (const tool of options.tools ?? [shTool, editTool, todoTool]) root.tools.register(tool)
  await mount(hostPlugin)
  await mount(serverPlugin, options.serverConfig ?? {})

  const updates: acp.SessionNotification[] = []
  const permissions: acp.RequestPermissionRequest[] = []
  const [agentSide, clientSide] = memoryStreams()
  const server = root.acpServer.connect(agentSide)
  const connection = acp.client({ name: 'test' })
    .onNotification('session/update', (c) => { updates.push(c.params) })
    .onRequest('session/request_permission', async (c) => {
      permissions.push(c.params)
      return options.permission ? options.permission(c.params) : { outcome: { outcome: 'selected', optionId: 'allow-once' } }
    })
    .connect(clientSide)
  const h: Harness = {
    root, model, agent: connection.agent, updates, permissions, cwd, home,
    initialize: (caps) => connection.agent.request('initialize', { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: caps ?? options.clientCapabilities ?? {} }),
    newSession: () => connection.agent.request('session/new', { cwd, mcpServers: [] }),
    async close() {
      connection.close()
      await server.close()
      await root.fiber.dispose()
      await model.close()
      for (const k of ENV_KEYS) {
        if (saved[k] === undefined) delete process.env[k]
        else process.env[k] = saved[k]
      }
    },
  }
  return h
}

/** The updates of one session, without the `sessionId` wrapper. */
export function updatesOf(h: Harness, sessionId: string): acp.SessionUpdate[] {
  return h.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update)
}

/** Waits until `predicate` holds (polling; for updates sent after a reply). */
export async function until(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now()
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 5))
  }
}

/** A raw JSON-RPC peer on its own connection to the harness's server: frames are enqueued as given (several in one read). */
export interface RawPeer {
  /** Enqueues the frames at once, as one read of the agent's input would deliver them. */
  send(...frames: object[]): void
  /** Every frame the agent sent, in order. */
  frames: Record<string, unknown>[]
  /** The response to request `id` (waits for it). */
  response(id: number | string): Promise<Record<string, unknown>>
  close(): Promise<void>
}

export function rawPeer(h: Harness): RawPeer {
  let input: ReadableStreamDefaultController<acp.AnyMessage> | undefined
  const readable = new ReadableStream<acp.AnyMessage>({ start: (c) => { input = c } })
  const frames: Record<string, unknown>[] = []
  const writable = new WritableStream<acp.AnyMessage>({ write: (frame) => { frames.push(frame as Record<string, unknown>) } })
  const server = h.root.acpServer.connect({ readable, writable })
  return {
    frames,
    send: (...list) => { for (const frame of list) input!.enqueue({ jsonrpc: '2.0', ...frame } as acp.AnyMessage) },
    async response(id) {
      await until(() => frames.some((f) => f.id === id && !('method' in f)))
      return frames.find((f) => f.id === id && !('method' in f))!
    },
    async close() {
      input!.close()
      await server.close()
    },
  }
}
