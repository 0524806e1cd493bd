import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { homeSecretDirs, homeSecretFiles, isSecretTempName } from '@dsh/core'
import { DshError } from '@dsh/protocol'

/**
 * dsh's own secret files (the credentials store, patch files), which no tool may read or
 * write in any permission mode. `list()` is re-read on every check (files come and go).
 * A path matches by real path (symlinks), by inode (hard links) or, inside the home, by
 * the name of an atomic-write temp file, or by lying in one of the home's secret directories.
 */
export class SecretFiles {
  constructor(readonly home: string | undefined, private readonly extra: readonly string[] = []) {}

  /** The secret files that exist now (absolute). */
  list(): string[] {
    return [...(this.home ? homeSecretFiles(this.home) : []), ...this.extra]
  }

  /** The secret file `p` reaches, if any. */
  async match(p: string): Promise<string | undefined> {
    const files = this.list()
    const real = await fsp.realpath(p).catch(() => path.resolve(p))
    if (this.home && isSecretTempName(path.basename(real)) && path.dirname(real) === (await fsp.realpath(this.home).catch(() => this.home))) return real
    for (const dir of this.home ? homeSecretDirs(this.home) : []) {
      const realDir = await fsp.realpath(dir).catch(() => path.resolve(dir))
      if (real === realDir || real.startsWith(`${realDir}${path.sep}`)) return real
    }
    if (!files.length) return undefined
    const st = await fsp.stat(real).catch(() => null)
    for (const file of files) {
      if ((await fsp.realpath(file).catch(() => file)) === real) return file
      const other = st && await fsp.stat(file).catch(() => null)
      if (st && other && st.dev === other.dev && st.ino === other.ino) return file
    }
    return undefined
  }

  /** Throws PATH_DENIED naming the secret file when `p` is one. */
  async check(p: string, verb: 'read' | 'write'): Promise<void> {
    const file = await this.match(p)
    if (!file) return
    throw new DshError('PATH_DENIED',
      `Cannot ${verb} ${p}: it is one of dsh's secret files (${file}: API keys or server tokens), which no tool may ${verb} in any permission mode. `
      + 'Do not retry; if the user needs it changed, they can edit it themselves (or use `dsh login`).',
      { data: { secret: file } })
  }
}
