import { homedir } from 'node:os'
import { join, resolve } from 'node:path'

/** `$DSH_HOME`: the `DSH_HOME` environment variable, else `~/.dsh`. */
export function resolveHome(env: Record<string, string | undefined> = process.env, home: string = homedir()): string {
  const fromEnv = env.DSH_HOME
  return fromEnv ? resolve(fromEnv) : join(home, '.dsh')
}

export function settingsFile(home: string): string {
  return join(home, 'settings.yaml')
}

export function credentialsFile(home: string): string {
  return join(home, '.credentials.yaml')
}
