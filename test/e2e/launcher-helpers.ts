// Spawns the built launcher (`node packages/cli/bin/dsh.js`) with a temp DSH_HOME
// and a minimal environment, as a user would run it.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const DSH_BIN = fileURLToPath(new URL('../../packages/cli/bin/dsh.js', import.meta.url))

export interface Run {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export function tempHome(): { home: string; env: Record<string, string> } {
  const base = mkdtempSync(join(tmpdir(), 'dsh-e2e-'))
  const home = join(base, 'dsh-home')
  mkdirSync(home)
  const userHome = join(base, 'user')
  mkdirSync(userHome)
  return { home, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: userHome, DSH_HOME: home, npm_config_cache: join(base, 'npm-cache') } }
}

export function start(args: string[], env: Record<string, string>, options: { cwd?: string; input?: string } = {}): { child: ChildProcess; done: Promise<Run>; stderr: () => string } {
  const child = spawn(process.execPath, [DSH_BIN, ...args], { env, cwd: options.cwd ?? tmpdir(), stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { stdout += d })
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  if (options.input !== undefined) child.stdin!.end(options.input)
  else child.stdin!.end()
  const done = new Promise<Run>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })))
  return { child, done, stderr: () => stderr }
}

export function dsh(args: string[], env: Record<string, string>, options: { cwd?: string; input?: string } = {}): Promise<Run> {
  return start(args, env, options).done
}

/** A profile with exactly these bundles (no template rows). */
export function makeProfile(home: string, name: string, bundles: string[], patch = ''): string {
  const dir = join(home, 'profiles', name)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `dsh-profile-${name}`, private: true, dsh: { profile: { version: 1, bundles } } }))
  writeFileSync(join(dir, 'cordis.patch.yml'), patch)
  return dir
}

/** Stack frames look like `    at fn (file:1:2)`. */
export const STACK = /\n\s+at .+[(:]\d+/
