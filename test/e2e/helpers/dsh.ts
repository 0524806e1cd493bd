import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const ROOT = realpathSync(join(import.meta.dirname, '..', '..', '..'))
/** The built launcher, as a user runs it. */
export const DSH_BIN = join(ROOT, 'node_modules', '.bin', 'dsh')

export function tempDir(prefix = 'dsh-e2e-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)))
}

export interface RunOptions {
  cwd?: string
  env?: Record<string, string | undefined>
  input?: string
  timeoutMs?: number
}

export interface RunResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** An environment with nothing of the developer's dsh setup or keys leaking in. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(DSH_|DEEPSEEK_|OPENAI_|ANTHROPIC_)/.test(key)) continue
    env[key] = value
  }
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) env[key] = value
  return env
}

export function spawnDsh(args: string[], options: RunOptions = {}): ChildProcess {
  return spawn(DSH_BIN, args, {
    cwd: options.cwd ?? ROOT,
    env: cleanEnv(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  })
}

/** Runs `dsh` to completion (killed after timeoutMs) and collects its output. */
export function runDsh(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const child = spawnDsh(args, options)
  return collect(child, options)
}

export function collect(child: ChildProcess, options: { input?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { stdout += d })
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  if (options.input !== undefined) child.stdin!.end(options.input)
  else child.stdin!.end()
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000)
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

/** Resolves when `predicate` holds for the text a stream has produced so far. */
export function waitForOutput(stream: NodeJS.ReadableStream, predicate: (text: string) => boolean, timeoutMs = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const timer = setTimeout(() => reject(new Error(`timed out waiting for output; got: ${text}`)), timeoutMs)
    stream.on('data', (d: Buffer | string) => {
      text += d.toString()
      if (predicate(text)) {
        clearTimeout(timer)
        resolve(text)
      }
    })
  })
}
