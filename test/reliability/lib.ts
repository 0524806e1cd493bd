import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { afterAll, it } from 'vitest'

/** DSH_DEEP=1 runs ten times the default counts. */
export const DEEP = process.env['DSH_DEEP'] === '1'
export const scaled = (n: number): number => (DEEP ? n * 10 : n)

/** A lane's seed: DSH_SEED when given (to replay a failure), else random; always printed. */
export function laneSeed(lane: string): number {
  const given = process.env['DSH_SEED']
  const seed = given !== undefined ? Number(given) >>> 0 : (Math.random() * 2 ** 32) >>> 0
  process.stdout.write(`reliability ${lane}: seed ${seed}${DEEP ? ' (DSH_DEEP=1)' : ''} — replay with DSH_SEED=${seed}\n`)
  return seed
}

/** mulberry32: a small deterministic generator, so a printed seed replays a run. */
export function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * A lane: `lane.case(name, fn)` is an `it` whose outcome is counted; after the file the
 * line `reliability <lane>: N passed, N failed` is printed. A case never skips: a missing
 * prerequisite is a thrown error (see `need`), so it counts as failed.
 */
export function defineLane(lane: string) {
  const counts = { passed: 0, failed: 0 }
  afterAll(() => {
    process.stdout.write(`reliability ${lane}: ${counts.passed} passed, ${counts.failed} failed\n`)
  })
  return {
    /** `concurrent`: the case shares nothing with others (its own world and mock model). */
    case(name: string, fn: () => Promise<void> | void, timeoutMs?: number, options: { concurrent?: boolean } = {}) {
      (options.concurrent ? it.concurrent : it)(name, async () => {
        try {
          await fn()
          counts.passed++
        } catch (error) {
          counts.failed++
          throw error
        }
      }, timeoutMs)
    },
  }
}

/** Fails (never skips) unless `command` is on PATH; names the Debian package to install. */
export function need(command: string, pkg = command): void {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' })
  if (found.status !== 0) throw new Error(`prerequisite missing: "${command}" is not on PATH (apt-get install -y ${pkg})`)
}

/** Fails unless this process is root (loop devices, mounts, creating a user). */
export function needRoot(why: string): void {
  if (process.getuid?.() !== 0) throw new Error(`prerequisite missing: this case must run as root (${why})`)
}

export function needFile(path: string, why: string): void {
  if (!existsSync(path)) throw new Error(`prerequisite missing: ${path} (${why})`)
}

/** Resident set size of a pid in bytes, from /proc. */
export function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))
  if (!line) throw new Error(`no VmRSS for pid ${pid}`)
  return Number(/(\d+)/.exec(line)![1]) * 1024
}

export function sh(command: string, options: { allowFail?: boolean; env?: NodeJS.ProcessEnv } = {}): string {
  const result = spawnSync('bash', ['-c', command], { encoding: 'utf8', env: options.env ?? process.env })
  if (result.status !== 0 && !options.allowFail) throw new Error(`command failed (${result.status}): ${command}\n${result.stderr}`)
  return result.stdout
}
