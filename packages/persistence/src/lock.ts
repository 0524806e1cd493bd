import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { link, open, readFile, rename, stat, unlink } from 'node:fs/promises'
import { hostname } from 'node:os'
import { DshError } from '@dsh/protocol'

/** The content of `<id>.lock`. */
export interface LockInfo { pid: number; host: string; started: number }

/** A lock file that is empty or unparsable for longer than this is a crash between create and write. */
const UNWRITTEN_GRACE_MS = 2_000
/** Slack between a process's start (whole seconds in /proc) and the time it wrote its lock. */
const START_SLACK_MS = 2_000

const PROCESS_STARTED = Date.now() - process.uptime() * 1000

export type LockState =
  | { kind: 'free' }
  | { kind: 'live'; info: LockInfo }
  | { kind: 'stale'; info: LockInfo | undefined; raw: string }
  | { kind: 'foreign'; info: LockInfo }
  /** Empty or unparsable and young: a writer is between create and write. */
  | { kind: 'unwritten' }

/**
 * Takes `lockPath` for this process: creates it with O_EXCL holding `{pid, host, started}`.
 * A stale lock (holder dead on this host, or the pid reused by a later process, or left
 * empty by a crash) is taken over; a live one throws SESSION_LOCKED naming the session,
 * pid and host. Resolves to the release function, which removes the file only while it
 * still holds this process's lock.
 */
export async function acquireLock(lockPath: string, sessionId: string): Promise<() => Promise<void>> {
  const mine: LockInfo = { pid: process.pid, host: hostname(), started: Date.now() }
  const text = JSON.stringify(mine)
  // An empty lock (a crash, or a power cut, between create and write) counts as a writer
  // mid-create only for UNWRITTEN_GRACE_MS after its mtime: wait that long, then take it over.
  const deadline = Date.now() + UNWRITTEN_GRACE_MS + 500
  for (let attempt = 0; attempt < 5 || Date.now() < deadline; attempt++) {
    try {
      const handle = await open(lockPath, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644)
      try {
        await handle.writeFile(text)
        // durable content: after a power cut the lock is absent or whole, never empty
        await handle.sync()
      } catch (error) {
        // a lock that could not be written (full disk) is not left behind, empty
        await handle.close().catch(() => undefined)
        await unlink(lockPath).catch(() => undefined)
        throw error
      }
      await handle.close()
      return () => releaseLock(lockPath, text)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const state = await inspectLock(lockPath)
    switch (state.kind) {
      case 'free': continue
      case 'stale': await takeOver(lockPath, state.raw); continue
      case 'unwritten': await delay(attempt < 5 ? 20 : 100); continue
      case 'live': case 'foreign': throw lockedError(sessionId, lockPath, state.info, state.kind === 'foreign')
    }
  }
  throw new DshError('SESSION_LOCKED', `session ${sessionId} is locked: its lock file ${lockPath} keeps changing`, {
    hint: 'another dsh process is opening this session at the same time; retry',
  })
}

/** Reads and judges a lock file (no side effects). */
export async function inspectLock(lockPath: string): Promise<LockState> {
  let raw: string
  let mtime: number
  try {
    raw = await readFile(lockPath, 'utf8')
    mtime = (await stat(lockPath)).mtimeMs
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'free' }
    throw error
  }
  const info = parseLock(raw)
  if (!info) return Date.now() - mtime > UNWRITTEN_GRACE_MS ? { kind: 'stale', info: undefined, raw } : { kind: 'unwritten' }
  if (info.host !== hostname()) return { kind: 'foreign', info }
  return (await holderAlive(info)) ? { kind: 'live', info } : { kind: 'stale', info, raw }
}

function parseLock(raw: string): LockInfo | undefined {
  try {
    const value = JSON.parse(raw) as Partial<LockInfo>
    if (typeof value.pid === 'number' && Number.isInteger(value.pid) && value.pid > 0
      && typeof value.host === 'string' && typeof value.started === 'number') {
      return { pid: value.pid, host: value.host, started: value.started }
    }
  } catch { /* unparsable */ }
  return undefined
}

/**
 * Whether the lock's holder still runs: `kill(pid, 0)` (ESRCH → dead, EPERM → alive),
 * and on Linux the process must have started before it wrote the lock (else the pid was
 * reused). A lock naming this very pid but older than this process is a previous
 * process's (containers reuse low pids).
 */
async function holderAlive(info: LockInfo): Promise<boolean> {
  if (info.pid === process.pid) return info.started + START_SLACK_MS >= PROCESS_STARTED
  try {
    process.kill(info.pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false
  }
  const started = await processStartTime(info.pid)
  return started === undefined || started <= info.started + START_SLACK_MS
}

/** Epoch ms a process started, from /proc (Linux); undefined when unknown. */
async function processStartTime(pid: number): Promise<number | undefined> {
  try {
    const [stat, system] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile('/proc/stat', 'utf8')])
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(fields[19])
    const btime = Number(/^btime (\d+)$/m.exec(system)?.[1])
    if (!Number.isFinite(ticks) || !Number.isFinite(btime)) return undefined
    return btime * 1000 + ticks * 10 // USER_HZ is 100 on Linux
  } catch {
    return undefined
  }
}

/**
 * Moves the stale lock aside atomically (rename), then checks that what was moved is the
 * lock judged stale; if another process replaced it meanwhile, puts that one back.
 */
async function takeOver(lockPath: string, staleRaw: string): Promise<void> {
  const aside = `${lockPath}.stale-${process.pid}-${randomBytes(4).toString('hex')}`
  try {
    await rename(lockPath, aside)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw error
  }
  const moved = await readFile(aside, 'utf8').catch(() => staleRaw)
  if (moved !== staleRaw) await link(aside, lockPath).catch(() => undefined)
  await unlink(aside).catch(() => undefined)
}

async function releaseLock(lockPath: string, mine: string): Promise<void> {
  const current = await readFile(lockPath, 'utf8').catch(() => undefined)
  if (current === mine) await unlink(lockPath).catch(() => undefined)
}

function lockedError(sessionId: string, lockPath: string, info: LockInfo, foreign: boolean): DshError {
  const since = new Date(info.started).toISOString()
  return new DshError('SESSION_LOCKED', `session ${sessionId} is being written by pid ${info.pid} on ${info.host} (since ${since})`, {
    hint: foreign
      ? `the lock was taken on another host; if no dsh runs there for this session, delete ${lockPath}`
      : `close the other dsh process (pid ${info.pid}) first, or fork the session to continue in a copy`,
    data: { sessionId, pid: info.pid, host: info.host, lockPath },
  })
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
