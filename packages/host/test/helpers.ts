import type { Context } from '@deepseek-ai/cordis'
import * as commandsPlugin from '@dsh/core/commands'
import * as presetsPlugin from '@dsh/core/presets'
import * as settingsPlugin from '@dsh/core/settings'
import { CLIENT_REQUESTS, NOTIFICATIONS, type ClientRequestName, type MethodName, type ParamsOf, type ResultOf } from '@dsh/host-api'
import * as hostPlugin from '@dsh/host/host'
import type { ClientCapabilities, HostClient, HostConnection } from '@dsh/host'
import type { SessionEvent } from '@dsh/protocol'
import { defineTool, type ToolDefinition } from '@dsh/core'
import { z } from 'zod'
import type { MockModel } from '@dsh/testkit'
import { buildTree, tempDir, until, type PluginEntry } from '@dsh/testkit/tree'
import { join } from 'node:path'

export interface Seen { sessionId: string; event: SessionEvent; view: unknown }

/** A scriptable surface: records notifications; answers requests with `answer` (default: never answers until aborted). */
export class TestClient implements HostClient {
  readonly events: Seen[] = []
  readonly statuses: { sessionId: string; status: string }[] = []
  readonly outputs: { sessionId: string; toolCallId: string; data: string }[] = []
  readonly requests: { method: ClientRequestName; params: any; signal: AbortSignal }[] = []
  answer: ((method: ClientRequestName, params: any, signal: AbortSignal) => Promise<unknown>) | undefined
  constructor(readonly name = 'test', readonly capabilities: ClientCapabilities = { approvals: true, questions: true, tools: true }) {}

  /** Notifications and requests that did not match the method table's schemas. */
  readonly violations: string[] = []

  private check(kind: string, schema: { safeParse(v: unknown): { success: boolean; error?: unknown } } | undefined, params: unknown): void {
    const parsed = schema?.safeParse(params)
    if (!parsed || !parsed.success) this.violations.push(`${kind}: ${JSON.stringify(parsed?.error ?? 'unknown')}`.slice(0, 500))
  }

  notify(method: string, params: any): void {
    this.check(method, (NOTIFICATIONS as Record<string, { params: any }>)[method]?.params, params)
    if (method === 'session/event') this.events.push(params as Seen)
    else if (method === 'session/status') this.statuses.push(params)
    else if (method === 'session/output') this.outputs.push(params)
  }

  request(method: ClientRequestName, params: any, signal: AbortSignal): Promise<any> {
    this.check(method, CLIENT_REQUESTS[method]?.params, params)
    this.requests.push({ method, params, signal })
    if (this.answer) return this.answer(method, params, signal)
    return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('withdrawn')), { once: true }))
  }

  of(sessionId: string): SessionEvent[] {
    return this.events.filter((e) => e.sessionId === sessionId).map((e) => e.event)
  }

  /** Resolves once a `turn/end` for `sessionId` has been notified (the `n`th one). */
  async turnEnd(sessionId: string, n = 1): Promise<SessionEvent> {
    await until(() => this.of(sessionId).filter((e) => e.type === 'turn/end').length >= n, 15_000)
    return this.of(sessionId).filter((e) => e.type === 'turn/end')[n - 1]!
  }

  async status(sessionId: string, status: string): Promise<void> {
    await until(() => this.statuses.filter((s) => s.sessionId === sessionId).at(-1)?.status === status, 15_000)
  }
}

export interface HostTree { root: Context; home: string; workspace: string; connect(client?: TestClient): { conn: HostConnection; client: TestClient } }

/** The real tree (testkit's) plus settings, commands, presets, extra plugins and the host. */
export async function hostTree(model: MockModel, options: { plugins?: readonly PluginEntry[]; store?: 'memory' | { dir: string }; tools?: readonly ToolDefinition<any, any>[] } = {}): Promise<HostTree> {
  const home = tempDir('dsh-home-')
  const { root } = await buildTree(model, {
    agent: false, ...(options.store ? { store: options.store } : {}), ...(options.tools ? { tools: options.tools } : {}),
    plugins: [
      [settingsPlugin, { file: join(home, 'settings.yaml') }], [commandsPlugin], [presetsPlugin, { dir: join(home, 'presets') }],
      ...options.plugins ?? [], [hostPlugin],
    ],
  })
  return {
    root, home, workspace: tempDir('dsh-ws-'),
    connect(client = new TestClient()) {
      return { conn: root.host.connect(client), client }
    },
  }
}

export type Call = <M extends MethodName>(method: M, params: ParamsOf<M>) => Promise<ResultOf<M>>

/** The rejection of `promise` (fails when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string; data?: any }> {
  try {
    await promise
  } catch (error) {
    return error as { code: string; message: string }
  }
  throw new Error('expected a rejection')
}

/** A tool that asks for approval and returns the outcome as its text. */
export const askTool = defineTool({
  name: 'ask_me', description: 'asks', parameters: z.object({ what: z.string() }),
  async execute(args: { what: string }, call) {
    return call.requestApproval({ kind: 'tool', title: `may I ${args.what}?`, rawInput: args })
  },
  output: { render: (outcome: string) => `outcome: ${outcome}` },
})
