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

/**
 * CPU time (ms) that `pid` has run so far, all its threads summed (user + system, from
 * /proc/<pid>/task/<tid>/schedstat; threads that already exited are not counted); 0 when it is gone.
 */
export function cpuMs(pid: number): number {
  let ns = 0
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0])
      } catch { /* the thread exited */ }
    }
  } catch { /* gone */ }
  return ns / 1e6
}

/** The first child of `pid` (e.g. the process `/usr/bin/time` runs), if it has one now. */
export function firstChild(pid: number): number | undefined {
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const c = readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(' ')[0]
      if (c) return Number(c)
    }
  } catch { /* gone */ }
  return undefined
}

/**
 * The request windows [from, to) whose mean gap is "the per-step cost at step N" (N = the
 * key): past start-up, inside a run of N+20 steps; request times are the mock's receipt times.
 */
export const STEP_WINDOWS: Readonly<Record<string, readonly [number, number]>> = { 10: [10, 30], 100: [100, 120], 1000: [979, 999] }

/**
 * Mean ms per step in each of {@link STEP_WINDOWS} that `requests` reaches: the gap between
 * request receipts, so it includes the mock's own work on each request (parsing a body that
 * grows with the history) as well as the client's.
 */
export function stepCosts(requests: readonly { time: number }[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [at, [from, to]] of Object.entries(STEP_WINDOWS)) {
    if (requests.length > to) out[at] = (requests[to]!.time - requests[from]!.time) / (to - from)
  }
  return out
}

/**
 * The client's share of {@link stepCosts}: mean ms, over the same windows, from the mock's
 * answer of request n being written (`answeredAt`) to request n+1 having arrived
 * (`receivedAt`) — the client's work between two model requests, without the mock's.
 */
export function clientStepCosts(requests: readonly { receivedAt: number; answeredAt?: number }[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [at, [from, to]] of Object.entries(STEP_WINDOWS)) {
    if (requests.length <= to) continue
    let sum = 0
    for (let n = from; n < to; n++) sum += requests[n + 1]!.receivedAt - (requests[n]!.answeredAt ?? Number.NaN)
    out[at] = sum / (to - from)
  }
  return out
}

/** Mean CPU ms per step over each of {@link STEP_WINDOWS}: `cpu[i]` is the client's {@link cpuMs} as request i arrived. */
export function cpuStepCosts(cpu: readonly number[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [at, [from, to]] of Object.entries(STEP_WINDOWS)) {
    if (cpu.length > to) out[at] = (cpu[to]! - cpu[from]!) / (to - from)
  }
  return out
}
