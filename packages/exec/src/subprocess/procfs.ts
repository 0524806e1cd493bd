import { readdirSync, readFileSync } from 'node:fs'

/**
 * Whether any live (non-zombie) process is in process group `pgid`. Reads /proc on
 * Linux (a killed orphan may stay a zombie until init reaps it, and `kill(-pgid, 0)`
 * still counts it); elsewhere falls back to `kill(-pgid, 0)`.
 */
export function groupHasLiveMembers(pgid: number): boolean {
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
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (fields[0] !== 'Z' && fields[0] !== 'X' && Number(fields[2]) === pgid) return true
  }
  return false
}
