import { readdirSync, readFileSync } from 'node:fs'

/**
 * Whether any live (non-zombie) process is in process group `pgid`. Reads /proc on
 * Linux (a killed orphan may stay a zombie until init reaps it, and `kill(-pgid, 0)`
 * still counts it); elsewhere falls back to `kill(-pgid, 0)`. `thorough: false` skips pids
 * below the pgid (members of a group are younger than its leader unless pids wrapped).
 */
export function groupHasLiveMembers(pgid: number, thorough = true): boolean {
  try {
    process.kill(-pgid, 0)
  } catch {
    return false
  }
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return true
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) > 57) continue
    // Members are created after their group's leader, so (barring pid wrap-around) their
    // pids are not below the pgid: the quick check reads only those.
    if (!thorough && Number(entry) < pgid) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // PF_EXITING (0x4 in the flags field): already in the kernel's exit path (e.g. bwrap
    // tearing down its namespaces) — it runs no more user code, so it is not a survivor.
    if (fields[0] !== 'Z' && fields[0] !== 'X' && Number(fields[2]) === pgid && (Number(fields[6]) & 0x4) === 0) return true
  }
  return false
}

/** The children of `pid` (its main thread's, from /proc), or undefined when it cannot be read (gone). */
export function childrenOf(pid: number): number[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number)
  } catch {
    return undefined
  }
}
