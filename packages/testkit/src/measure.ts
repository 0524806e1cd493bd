import { readdirSync, readFileSync } from 'node:fs'

/** VmRSS of one process in KB, read from /proc now; 0 when it is gone. */
export function rssKb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
  } catch {
    return 0
  }
}

/**
 * Summed VmRSS (KB) of `pid` and all its descendants, from /proc now (what benchmarks and
 * memory tests call "the process tree"; processes that exit while it is read count 0).
 */
export function treeRssKb(pid: number): number {
  let total = 0
  const stack = [pid]
  while (stack.length) {
    const p = stack.pop()!
    total += rssKb(p)
    try {
      for (const t of readdirSync(`/proc/${p}/task`)) {
        for (const c of readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').split(' ')) if (c.trim()) stack.push(Number(c))
      }
    } catch { /* gone */ }
  }
  return total
}
