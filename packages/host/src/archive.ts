import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

/**
 * Which sessions are archived (hidden from the default list). Kept beside the session
 * store in `archived.json` (a sorted id list, replaced atomically) when the store has a
 * directory, else in memory. Listing stays cheap: no log is read to know it.
 */
export class Archive {
  private readonly ids = new Set<string>()

  constructor(private readonly file: string | undefined) {
    if (!file) return
    try {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown
      if (Array.isArray(parsed)) for (const id of parsed) if (typeof id === 'string') this.ids.add(id)
    } catch {
      // none yet (or unreadable: treated as none, rewritten on the next change)
    }
  }

  static beside(storeDir: string | undefined): Archive {
    return new Archive(storeDir ? join(storeDir, 'archived.json') : undefined)
  }

  has(id: string): boolean {
    return this.ids.has(id)
  }

  set(id: string, archived: boolean): void {
    if (archived === this.ids.has(id)) return
    if (archived) this.ids.add(id)
    else this.ids.delete(id)
    this.save()
  }

  private save(): void {
    if (!this.file) return
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 })
    const tmp = `${this.file}.${process.pid}.tmp`
    writeFileSync(tmp, JSON.stringify([...this.ids].sort()) + '\n', { mode: 0o600 })
    renameSync(tmp, this.file)
  }
}
