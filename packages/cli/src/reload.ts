import { existsSync, watch, type FSWatcher } from 'node:fs'
import { basename, dirname } from 'node:path'

export const RELOAD_DEBOUNCE_MS = 100

/**
 * Calls `onChange(files)` (debounced) when any of `files` is created, written,
 * replaced or removed. Watches the parent directories (editors save by rename).
 */
export function watchPatches(files: readonly string[], onChange: (files: string[]) => void): { close(): void } {
  const watchers: FSWatcher[] = []
  const pending = new Set<string>()
  let timer: NodeJS.Timeout | undefined
  const byDir = new Map<string, string[]>()
  for (const file of files) byDir.set(dirname(file), [...(byDir.get(dirname(file)) ?? []), file])
  for (const [dir, inDir] of byDir) {
    if (!existsSync(dir)) continue
    try {
      const watcher = watch(dir, { persistent: false }, (_event, name) => {
        const hit = name === null ? inDir : inDir.filter((f) => basename(f) === name)
        if (!hit.length) return
        for (const f of hit) pending.add(f)
        clearTimeout(timer)
        timer = setTimeout(() => {
          const changed = [...pending]
          pending.clear()
          onChange(changed)
        }, RELOAD_DEBOUNCE_MS)
      })
      watcher.on('error', () => watcher.close())
      watchers.push(watcher)
    } catch {
      // an unwatchable directory means no reload for its files
    }
  }
  return {
    close() {
      clearTimeout(timer)
      for (const w of watchers) w.close()
    },
  }
}
