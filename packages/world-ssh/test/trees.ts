import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import path from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import * as fsPlugin from '@dsh/exec/fs'
import * as sandboxPlugin from '@dsh/exec/sandbox'
import * as shellPlugin from '@dsh/exec/shell'
import * as subprocessPlugin from '@dsh/exec/subprocess'
import * as bashPlugin from '@dsh/tools-builtin/bash'
import * as filesPlugin from '@dsh/tools-builtin/files'
import * as searchPlugin from '@dsh/tools-builtin/search'
import { buildTree, type PluginEntry } from '@dsh/testkit/tree'
import type { MockModel } from '@dsh/testkit'
import type { ToolResult } from '@dsh/protocol'
import * as worldPlugin from '../src/plugins/world.js'
import type { WorldSpec } from '../src/url.js'
import type { ToolRun } from './conformance.js'
import type { TestUser } from './sshd.js'

export const EXEC_PLUGINS: PluginEntry[] = [
  [subprocessPlugin, { killGraceMs: 200 }], [sandboxPlugin, {}], [fsPlugin, {}], [shellPlugin, {}],
]
export const TOOL_PLUGINS: PluginEntry[] = [[bashPlugin, {}], [filesPlugin, {}], [searchPlugin, {}]]

/** A tree with the four local seams only. */
export async function execRoot(): Promise<Context> {
  const root = new Context()
  for (const [plugin, config] of EXEC_PLUGINS) await root.plugin(plugin as never, config as never)
  return root
}

/** A fresh directory owned by `user` under its home (or under the temp dir for root). */
export function workspaceOf(user: { name: string; home: string } | undefined): string {
  if (!user) return realpathSync(mkdtempSync(path.join(tmpdir(), 'dsh-conf-')))
  const dir = mkdtempSync(path.join(user.home, 'ws-'))
  execFileSync('chown', [`${user.name}:`, dir])
  return dir
}

export const LOCAL_USER = { name: execFileSync('id', ['-un']).toString().trim(), uid: process.getuid?.() ?? 0, home: homedir() }

/** One agent turn calling `calls` in order (then answering "done"), in `ws`, optionally in an SSH world. */
export async function toolTurn(model: MockModel, ws: string, calls: { name: string; arguments: unknown }[], world?: WorldSpec): Promise<ToolRun> {
  const script = [...calls.map((c) => ({ toolCalls: [c] })), { text: 'done' }]
  const tree = await buildTree(model, { script, cwd: ws, plugins: [...EXEC_PLUGINS, ...TOOL_PLUGINS, [worldPlugin, { killGraceMs: 200 }]] })
  if (world) await tree.root.worlds.select(tree.session, world)
  const outcome = await tree.agent.followup('go')
  const results = tree.session.events.filter((e) => e.type === 'tool/result').map((e) => e.data as unknown as ToolResult)
  return { results, text: outcome.reason === 'completed' ? outcome.text : `[${outcome.reason}]` }
}

export function userWorkspaceRoot(user: TestUser): string {
  const dir = path.join(user.home, 'root')
  mkdirSync(dir, { recursive: true })
  execFileSync('chown', [`${user.name}:`, dir])
  return dir
}
