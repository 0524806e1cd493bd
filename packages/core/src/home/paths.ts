import { existsSync, readdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { homeParseCacheDir } from '@dsh/protocol'

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

/** Patch file name of `$DSH_HOME` and of each profile (the launcher's PATCH_FILE). */
const PATCH_FILE = 'cordis.patch.yml'

/**
 * The secret-bearing files of `$DSH_HOME` that exist now: the credentials store, the
 * patch files (their row configs may carry MCP `env`/`headers` tokens) and the entries of
 * the parse cache (parsed patch files, see {@link homeSecretDirs}). No tool may read or
 * write them, and the sandbox masks them.
 */
export function homeSecretFiles(home: string): string[] {
  const files = [credentialsFile(home), join(home, PATCH_FILE)]
  const profiles = join(home, 'profiles')
  try {
    for (const name of readdirSync(profiles)) files.push(join(profiles, name, PATCH_FILE))
  } catch {
    // no profiles yet
  }
  const cache = homeParseCacheDir(home)
  try {
    for (const name of readdirSync(cache)) files.push(join(cache, name))
  } catch {
    // no cache yet
  }
  return files.filter((f) => existsSync(f))
}

/** Directories of `$DSH_HOME` every file of which (present or future) is secret: the parse cache. */
export function homeSecretDirs(home: string): string[] {
  return [homeParseCacheDir(home)]
}

/** True for the temp file an atomic write of a secret file uses (`.<name>.<pid>.<time>.tmp` beside it). */
export function isSecretTempName(name: string): boolean {
  return /^\.(\.credentials\.yaml|cordis\.patch\.yml)\.\d+\.\d+\.tmp$/.test(name)
}
