import { renameSync, writeFileSync } from 'node:fs'
import type { Context } from '@deepseek-ai/cordis'
import { snapshotTree, type Mounter } from '@dsh/boot'
import { errorInfo } from '@dsh/protocol'

/**
 * `DSH_TREE_REPORT=<file>`: after boot and after every reload the launcher
 * replaces <file> (atomically) with a JSON snapshot of the tree:
 * `{generation, event, ok, error?, profile, rows, services, listeners}`.
 */
export class TreeReporter {
  private generation = 0

  constructor(private readonly file: string | undefined, private readonly root: Context, private readonly mounter: Mounter, private readonly profile: string) {}

  write(event: 'boot' | 'reload', error?: unknown): void {
    if (!this.file) return
    const report = {
      generation: ++this.generation,
      event,
      ok: error === undefined,
      ...(error === undefined ? {} : { error: errorInfo(error) }),
      profile: this.profile,
      ...snapshotTree(this.root, this.mounter),
    }
    const tmp = `${this.file}.${process.pid}.tmp`
    writeFileSync(tmp, `${JSON.stringify(report, null, 2)}\n`)
    renameSync(tmp, this.file)
  }
}
