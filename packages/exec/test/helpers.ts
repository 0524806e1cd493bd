import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import type { ExecPolicy, SandboxMode } from '@dsh/protocol'
import * as fsPlugin from '../src/plugins/fs.js'
import * as sandboxPlugin from '../src/plugins/sandbox.js'
import * as shellPlugin from '../src/plugins/shell.js'
import * as subprocessPlugin from '../src/plugins/subprocess.js'

const dirs: string[] = []

/** A fresh real directory (resolved), removed by `cleanupDirs`. */
export function tempDir(label = 'dsh-exec'): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), `${label}-`)))
  dirs.push(dir)
  return dir
}

export function cleanupDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

export function policyFor(mode: SandboxMode, workspace: string, tmpRoot: string, extraRoots: string[] = []): ExecPolicy {
  return { mode, cwd: workspace, writableRoots: [workspace, ...extraRoots], tmpRoot, network: true }
}

export interface TreeOptions {
  sandbox?: Record<string, unknown>
  shell?: Record<string, unknown>
  subprocess?: Record<string, unknown>
}

/** A real plugin tree holding the four local seams. */
export async function execTree(options: TreeOptions = {}): Promise<Context> {
  const root = new Context()
  await root.plugin(subprocessPlugin, subprocessPlugin.Config.parse({ killGraceMs: 300, ...options.subprocess }))
  await root.plugin(sandboxPlugin, sandboxPlugin.Config.parse(options.sandbox ?? {}))
  await root.plugin(fsPlugin, {})
  await root.plugin(shellPlugin, shellPlugin.Config.parse(options.shell ?? {}))
  return root
}

/** Live (non-zombie) processes whose process group is `pgid`, read from /proc. */
export function processesInGroup(pgid: number): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // a process already in the kernel's exit path (PF_EXITING) runs no more user code
    if (fields[0] !== 'Z' && Number(fields[2]) === pgid && (Number(fields[6]) & 0x4) === 0) found.push(Number(entry))
  }
  return found
}

/** Polls `probe` until it returns true (bounded by the test timeout). */
export async function until(probe: () => boolean, stepMs = 20): Promise<void> {
  while (!probe()) await new Promise((r) => setTimeout(r, stepMs))
}
