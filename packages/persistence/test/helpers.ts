import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from 'esbuild'

/** A fresh temp dir; `cleanup()` removes it. */
export function tempDir(prefix = 'dsh-persist-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Bundles test/fixtures/<name>.ts (from source) into a runnable .mjs in `outDir`. */
export async function buildWriter(outDir: string, name = 'writer'): Promise<string> {
  const outfile = join(outDir, `${name}.mjs`)
  await build({
    entryPoints: [new URL(`./fixtures/${name}.ts`, import.meta.url).pathname],
    bundle: true, platform: 'node', format: 'esm', target: 'node20', conditions: ['dsh-source'], outfile, logLevel: 'warning',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  })
  return outfile
}

export interface Writer { child: ChildProcess; pid: number; kill: () => Promise<void> }

/** Starts the writer and resolves once it printed `ready <pid>`. */
export function startWriter(script: string, dir: string, id: string, scenario: string): Promise<Writer> {
  const child = spawn(process.execPath, [script, dir, id, scenario], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stderr!.on('data', (d: Buffer) => { err += d.toString() })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await exited
  }
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString()
      const match = /ready (\d+)\n/.exec(out)
      if (match) resolve({ child, pid: Number(match[1]), kill })
    })
    child.once('exit', (code) => reject(new Error(`writer exited (${code}) before ready: ${err}`)))
  })
}

/** The pid of a process that has exited (for dead-holder locks). */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
  await new Promise((resolve) => child.once('exit', resolve))
  return child.pid!
}
