import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Io } from './output.js'

/** What every launcher command runs with. */
export interface LaunchEnv {
  home: string
  cwd: string
  env: Record<string, string | undefined>
  /** Where dsh's own packages resolve from: the cli package's directory. */
  dshRoot: string
  version: string
  io: Io
}

/** The cli package directory (dist/… or src/… are one level below it). */
export const CLI_ROOT = fileURLToPath(new URL('..', import.meta.url))

export function cliVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version
}

/**
 * `$DSH_HOME`: env DSH_HOME, else `~/.dsh`. Same rule as `resolveHome` in
 * @dsh/core (home/paths.ts); repeated here so booting does not load @dsh/core.
 */
export function resolveHome(env: Record<string, string | undefined>): string {
  return env.DSH_HOME ? resolve(env.DSH_HOME) : join(homedir(), '.dsh')
}
