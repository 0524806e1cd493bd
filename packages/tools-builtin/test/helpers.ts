import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import * as toolsPlugin from '@dsh/core/tools'
import type { ToolCallContext, ToolDefinition } from '@dsh/core'
import * as fsPlugin from '@dsh/exec/fs'
import * as sandboxPlugin from '@dsh/exec/sandbox'
import * as shellPlugin from '@dsh/exec/shell'
import * as subprocessPlugin from '@dsh/exec/subprocess'
import { isDshError, textOf, type ApprovalOutcome, type ApprovalRequest, type ExecPolicy, type Json, type SandboxMode, type ToolResult } from '@dsh/protocol'
import * as bashPlugin from '../src/plugins/bash.js'
import * as filesPlugin from '../src/plugins/files.js'
import * as searchPlugin from '../src/plugins/search.js'
import * as todoPlugin from '../src/plugins/todo.js'

const dirs: string[] = []

export function tempDir(label = 'dsh-tools'): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), `${label}-`)))
  dirs.push(dir)
  return dir
}

export function cleanupDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

export function policyFor(mode: SandboxMode, workspace: string, tmpRoot: string): ExecPolicy {
  return { mode, cwd: workspace, writableRoots: [workspace], tmpRoot, network: true }
}

/** A real tree: the four local seams, the core registry and every builtin tool plugin. */
export async function toolTree(options: { sandbox?: Record<string, unknown>; search?: Record<string, unknown>; shell?: Record<string, unknown> } = {}) {
  const root = new Context()
  await root.plugin(toolsPlugin)
  await root.plugin(subprocessPlugin, subprocessPlugin.Config.parse({ killGraceMs: 300 }))
  await root.plugin(sandboxPlugin, sandboxPlugin.Config.parse(options.sandbox ?? {}))
  await root.plugin(fsPlugin, {})
  await root.plugin(shellPlugin, shellPlugin.Config.parse(options.shell ?? {}))
  await root.plugin(bashPlugin, {})
  await root.plugin(filesPlugin, {})
  await root.plugin(searchPlugin, searchPlugin.Config.parse(options.search ?? {}))
  await root.plugin(todoPlugin, {})
  return root
}

export interface Harness {
  root: Context
  cwd: string
  tmp: string
  policy: ExecPolicy
  sessionId: string
  logs: { type: string; data: Json; ignorable: boolean }[]
  progress: string[]
  approvals: Omit<ApprovalRequest, 'callId' | 'tool'>[]
  /** The answer to the next approval questions (default reject, as headless). */
  answer: ApprovalOutcome
}

export interface CallOutcome { result: ToolResult; value?: unknown; text: string }

let calls = 0

/** Runs a tool as the pipeline would: parse, execute, render (a throw is an error result). */
export async function callTool(h: Harness, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallOutcome> {
  const tool = h.root.tools.get(name) as ToolDefinition | undefined
  if (!tool) throw new Error(`no tool ${name}`)
  const parsed = tool.parameters.parse(args)
  const call: ToolCallContext = {
    callId: `call-${++calls}`,
    sessionId: h.sessionId,
    cwd: h.cwd,
    policy: h.policy,
    approvalAvailable: true,
    signal: signal ?? new AbortController().signal,
    ctx: h.root,
    requestApproval: async (request) => {
      h.approvals.push(request)
      return h.answer
    },
    log: (type, data, opts) => { h.logs.push({ type, data, ignorable: !!opts?.ignorable }) },
    progress: (update) => { h.progress.push(update.data) },
  }
  try {
    const value = await tool.execute(parsed, call)
    const rendered = tool.output.render(value, parsed)
    const content = typeof rendered === 'string' ? [{ type: 'text' as const, text: rendered }] : rendered
    const result = { content, isError: !!tool.output.isError?.(value) }
    return { result, value, text: textOf(content) }
  } catch (error) {
    const message = isDshError(error) ? `Error (${error.code}): ${error.message}` : `Error: ${(error as Error).message}`
    return { result: { content: [{ type: 'text', text: message }], isError: true }, text: message }
  }
}

export async function harness(root: Context, mode: SandboxMode = 'workspace-write', sessionId = 'session-1'): Promise<Harness> {
  const cwd = tempDir('ws')
  const tmp = tempDir('tmproot')
  return { root, cwd, tmp, policy: policyFor(mode, cwd, tmp), sessionId, logs: [], progress: [], approvals: [], answer: 'reject' }
}

/** Live processes (seen from the host's /proc) whose command line is exactly `argv`. */
export function processesRunning(argv: string[]): number[] {
  const want = argv.join('\0') + '\0'
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8') === want) found.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return found
}
