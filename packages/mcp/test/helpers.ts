import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { fileURLToPath } from 'node:url'
import { Context } from '@deepseek-ai/cordis'
import { runToolCalls, type Session } from '@dsh/core'
import * as memoryStorePlugin from '@dsh/core/memory-store'
import * as permissionPlugin from '@dsh/core/permission'
import * as sessionsPlugin from '@dsh/core/sessions'
import * as toolsPlugin from '@dsh/core/tools'
import type { ToolContent } from '@dsh/protocol'
import * as clientPlugin from '../src/plugins/client.js'
import type { McpNotice } from '../src/service.js'

export const FIXTURE = fileURLToPath(new URL('./fixtures/server.mjs', import.meta.url))

/** A stdio spec running the fixture server with this node. */
export const fixtureSpec = (env: Record<string, string> = {}) => ({ command: process.execPath, args: [FIXTURE], env })

export interface Tree {
  root: Context
  /** The MCP plugin's fiber, for disposal. */
  dispose(): Promise<void>
  notices: McpNotice[]
}

/** tools + memory store + sessions, then the MCP client with `config` (short kill grace). */
export async function mcpTree(config: Record<string, unknown>, options: { settle?: boolean; permission?: 'read-only' | 'workspace-write' | 'danger-full-access' } = {}): Promise<Tree> {
  const root = new Context()
  const notices: McpNotice[] = []
  root.on('mcp/notice', (notice) => { notices.push(notice) })
  await root.plugin(toolsPlugin)
  await root.plugin(memoryStorePlugin, {})
  await root.plugin(sessionsPlugin, {})
  if (options.permission) await root.plugin(permissionPlugin, { default: options.permission, network: false })
  const fiber = root.plugin(clientPlugin, clientPlugin.Config.parse({ killGraceMs: 500, ...config }))
  await fiber
  if (options.settle !== false) await root.mcp.settled()
  return { root, notices, dispose: () => fiber.dispose() }
}

let calls = 0

/** Runs one call through the real pipeline (validation, execution, rendering) and returns its logged result. */
export async function runCall(root: Context, session: Session, name: string, args: unknown, signal?: AbortSignal, approval: 'ask' | 'never' = 'never'): Promise<{ content: ToolContent[]; isError: boolean }> {
  const id = `call-${++calls}`
  await runToolCalls({
    ctx: root,
    session,
    lookup: (tool) => root.tools.get(tool, session.id),
    guards: [],
    canAsk: false,
    signal: signal ?? new AbortController().signal,
    cwd: tmpdir(),
    policy: { mode: 'danger-full-access', cwd: tmpdir(), writableRoots: [], tmpRoot: tmpdir(), network: true },
    approval,
    requestApproval: async () => 'reject',
  }, [{ type: 'tool-call', id, name, arguments: JSON.stringify(args) }])
  const result = session.events.find((e) => e.type === 'tool/result' && (e.data as { callId: string }).callId === id)
  if (!result) throw new Error(`no result for ${id}`)
  const { content, isError } = result.data as unknown as { content: ToolContent[]; isError: boolean }
  return { content, isError }
}

/** Whether a pid is a live process (a zombie counts as dead). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}

/** Starts the fixture as a streamable-HTTP server on 127.0.0.1; resolves with its URL and process. */
export function startHttpFixture(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [FIXTURE, 'http'], { stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    let out = ''
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`http fixture exited (${code})`)))
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      out += chunk
      const port = /listening (\d+)/.exec(out)?.[1]
      if (port) resolve({ url: `http://127.0.0.1:${port}/mcp`, child })
    })
  })
}
