/**
 * The real plugin tree the integration tests drive, in one place: a scripted mock model
 * per test (`useMockModel`), the core plugins mounted in the order `dsh` mounts them
 * (`buildTree`), the "model-visible means logged" check (`expectRequestsMatchLog`) and a
 * polling wait (`until`). Everything is real except the model.
 */
import { Context } from '@deepseek-ai/cordis'
import { deriveMessages, type Agent, type AgentOptions, type Session, type ToolDefinition } from '@dsh/core'
import * as agentsPlugin from '@dsh/core/agents'
import * as approvalPlugin from '@dsh/core/approval'
import * as credentialsPlugin from '@dsh/core/credentials'
import * as llmPlugin from '@dsh/core/llm'
import * as memoryStore from '@dsh/core/memory-store'
import * as permissionPlugin from '@dsh/core/permission'
import * as promptPlugin from '@dsh/core/prompt'
import * as retryPlugin from '@dsh/core/retry'
import * as sessionsPlugin from '@dsh/core/sessions'
import * as toolsPlugin from '@dsh/core/tools'
import { buildChatRequest } from '@dsh/llm-openai'
import * as openaiPlugin from '@dsh/llm-openai/adapter'
import * as jsonlStore from '@dsh/persistence/jsonl'
import type { SessionEvent } from '@dsh/protocol'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect } from 'vitest'
import { expectedBodies, requestsFromLog } from './log-check.js'
import { startMockModel, type MockModel } from './mock-model/server.js'
import type { Script } from './mock-model/script.js'

/** A plugin module (or inline plugin object) and its config input; cordis validates and defaults it. */
export type PluginEntry = readonly [plugin: object, config?: unknown]

/** A fresh directory under the system temp dir, named `<prefix>XXXXXX`. */
export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** Trees built by `buildTree` and not yet disposed by a `useMockModel` after-each hook. */
const live = new Set<Context>()

async function disposeTrees(): Promise<void> {
  const trees = [...live]
  live.clear()
  for (const root of trees) await root.fiber.dispose()
}

/**
 * Registers vitest hooks on the calling suite: before each test a fresh mock model starts
 * and (unless `env: false`) DEEPSEEK_API_KEY = 'mock-key' and DEEPSEEK_BASE_URL = its URL
 * are set; after each test every tree built by `buildTree` is disposed first (whichever
 * mock's hook runs first does it, so a tree never outlives a mock it talks to), then the
 * mock closes and the two variables get back their previous values (unset when they had
 * none). Returns a getter for the current test's mock (it throws outside a test).
 */
export function useMockModel(options: { env?: boolean } = {}): () => MockModel {
  const env = options.env ?? true
  let model: MockModel | undefined
  let previous: { key: string | undefined; url: string | undefined } | undefined
  beforeEach(async () => {
    if (env) previous = { key: process.env.DEEPSEEK_API_KEY, url: process.env.DEEPSEEK_BASE_URL }
    model = await startMockModel()
    if (env) {
      process.env.DEEPSEEK_API_KEY = 'mock-key'
      process.env.DEEPSEEK_BASE_URL = model.url
    }
  })
  afterEach(async () => {
    await disposeTrees()
    await model?.close()
    model = undefined
    if (!previous) return
    for (const [k, v] of [['DEEPSEEK_API_KEY', previous.key], ['DEEPSEEK_BASE_URL', previous.url]] as const) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
    previous = undefined
  })
  return () => {
    if (!model) throw new Error('useMockModel(): the mock model runs only inside a test (it starts in beforeEach)')
    return model
  }
}

export interface TreeOptions {
  /** Set on the model before anything mounts; when absent the model's script is left as it is. */
  script?: Script
  /** Mount into this context (e.g. one with a logger exporter attached already); default a new one. */
  root?: Context
  /** The session store: `@dsh/core/memory-store` (default) or `@dsh/persistence/jsonl` in `dir`. */
  store?: 'memory' | { dir: string }
  /** Only the store and sessions: skip the agent stack (credentials … agents); needs `agent: false`. */
  bare?: boolean
  /** Mount `@dsh/core/retry` with this config (after the adapter); absent: no retry plugin. */
  retry?: Record<string, unknown>
  /** Config of `@dsh/core/permission`; absent: mounted with no config (its defaults). */
  permission?: Record<string, unknown>
  /** `maxSteps` of `@dsh/core/agents` (default 20). */
  maxSteps?: number
  /** Extra plugins, mounted in this order after the agent stack. */
  plugins?: readonly PluginEntry[]
  /** Tools registered on `root.tools` once every plugin is mounted. */
  tools?: readonly ToolDefinition<any, any>[]
  /** The session's working directory (default a fresh temp dir). */
  cwd?: string
  /** Options for the session's agent, or `false` to create none. */
  agent?: AgentOptions | false
}

export interface Tree {
  root: Context
  session: Session
  agent: Agent
  /** Mounts one more plugin on `root` (config validated and defaulted by cordis). */
  mount: (plugin: object, config?: unknown) => Promise<void>
}

/**
 * Builds the tree against `model` and opens a session in it. Mounted in order: the store,
 * sessions, then (unless `bare`) credentials (a temp file that does not exist, so the key
 * comes from DEEPSEEK_API_KEY), llm, the OpenAI adapter, retry (when configured), tools,
 * prompt (no project instructions), permission, approval and agents; then `plugins`; then
 * `tools` are registered; then the session is created and its agent (unless `agent: false`).
 * The tree is disposed after the test by `useMockModel`'s hook.
 */
export async function buildTree(model: MockModel, options: TreeOptions & { agent: false }): Promise<Omit<Tree, 'agent'>>
export async function buildTree(model: MockModel, options?: TreeOptions): Promise<Tree>
export async function buildTree(model: MockModel, options: TreeOptions = {}): Promise<Omit<Tree, 'agent'> & { agent?: Agent }> {
  if (options.bare && options.agent !== false) throw new Error('buildTree: a bare tree has no agents service; pass agent: false')
  if (options.script) model.setScript(options.script)
  const root = options.root ?? new Context()
  live.add(root)
  const mount = async (plugin: object, config?: unknown) => { await root.plugin(plugin as never, config as never) }
  const entries: PluginEntry[] = [options.store && options.store !== 'memory' ? [jsonlStore, { dir: options.store.dir }] : [memoryStore], [sessionsPlugin]]
  if (!options.bare) {
    entries.push([credentialsPlugin, { file: join(tempDir('dsh-cred-'), 'none.yaml') }], [llmPlugin, {}], [openaiPlugin])
    if (options.retry) entries.push([retryPlugin, options.retry])
    entries.push(
      [toolsPlugin], [promptPlugin, { projectInstructions: false }], [permissionPlugin, options.permission],
      [approvalPlugin], [agentsPlugin, { maxSteps: options.maxSteps ?? 20 }],
    )
  }
  entries.push(...options.plugins ?? [])
  for (const [plugin, config] of entries) await mount(plugin, config)
  for (const tool of options.tools ?? []) root.tools.register(tool)
  const session = await root.sessions.create({ cwd: options.cwd ?? tempDir('dsh-ws-') })
  const agent = options.agent === false ? undefined : root.agents.create(session, options.agent)
  return agent ? { root, session, agent, mount } : { root, session, mount }
}

/** The provider bodies (OpenAI chat) a session's log says the model must have received, in order. */
export function bodiesFromLog(events: readonly SessionEvent[]): unknown[] {
  return expectedBodies(requestsFromLog(events, deriveMessages), buildChatRequest)
}

/** Asserts the bodies the mock received (`requests.slice(from, to)`) equal what the session's log derives. */
export function expectRequestsMatchLog(model: MockModel, session: Session, from = 0, to?: number): void {
  expect(model.requests.slice(from, to).map((r) => r.body)).toEqual(bodiesFromLog(session.events))
}

/** Resolves once `predicate()` holds (polled every 5 ms); rejects after `timeoutMs`. */
export async function until(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now()
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not reached')
    await new Promise((r) => setTimeout(r, 5))
  }
}
