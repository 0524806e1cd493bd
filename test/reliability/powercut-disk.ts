import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync } from 'node:fs'
import type { SessionEvent } from '@dsh/protocol'
import type { MockModel, Step } from '@dsh/testkit'
import { cleanEnv, DSH_BIN } from '../e2e/helpers/dsh.js'
import { need, needFile, needRoot, sh } from './lib.js'
import { printedEvents } from './sessions.js'

// The power-cut lane's disk and writer: an ext4 image on a loop device holding
// $DSH_HOME/sessions, a `--json` writer whose stdout goes to a regular file (so what it had
// shown at any instant is that file's bytes at that instant), and power cuts taken while
// the writer runs: stop it, note what it had shown, copy the image, let it go on.

export function prerequisites(): void {
  needRoot('loop devices and mounts')
  need('mkfs.ext4', 'e2fsprogs')
  need('losetup', 'mount')
  needFile('/dev/loop-control', 'loop devices')
  needFile(SHM, 'a tmpfs for the backing images')
}

const SHM = '/dev/shm'

/**
 * A folder on tmpfs for an image, its copies, the home and the workspace. The backing file
 * on tmpfs makes the loop device's flush a no-op (nothing waits on the machine's real disk)
 * without changing what a cut sees: the copy holds what the loop device was given, and the
 * upper file system's page cache is still not in it.
 */
export function imageDir(): string {
  return mkdtempSync(`${SHM}/dsh-rel-power-`)
}

/** A fresh sparse ext4 image (journal on, as a user's disk). */
export function makeImage(image: string): void {
  sh(`truncate -s 32M ${image} && mkfs.ext4 -q -F ${image}`)
}

/** `image` on a loop device mounted at `dir`; the journal commits rarely (commit=60). Returns the unmount. */
export function mountImage(image: string, dir: string): () => void {
  mkdirSync(dir, { recursive: true })
  const device = sh(`losetup -f --show ${image}`).trim()
  try {
    sh(`mount -t ext4 -o commit=60 ${device} ${dir}`)
  } catch (error) {
    sh(`losetup -d ${device}`, { allowFail: true })
    throw error
  }
  let done = false
  return () => {
    if (done) return
    done = true
    sh(`umount ${dir}`, { allowFail: true })
    sh(`losetup -d ${device}`, { allowFail: true })
  }
}

/** `steps` tool steps (odd: bash appends to trail.txt; even: write fN.txt), then the answer. */
export function script(steps: number): Step[] {
  const out: Step[] = []
  for (let n = 1; n < steps; n++) {
    out.push(n % 2
      ? { toolCalls: [{ name: 'bash', arguments: { command: `echo ${n} >> trail.txt` } }] }
      : { toolCalls: [{ name: 'write', arguments: { path: `f${n}.txt`, content: `step ${n}\n` } }] })
  }
  out.push({ text: 'done' })
  return out
}

export interface Writer {
  child: ChildProcess
  stdoutFile: string
  /** Resolves with the exit status and stderr when the writer has ended. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>
}

/** Starts `dsh --json` (under eatmydata(1) when asked: fsync and fdatasync become no-ops) with stdout to a file. */
export function startWriter(model: MockModel, home: string, workspace: string, stdoutFile: string, eatmydata: boolean, args: string[] = ['go']): Writer {
  const fd = openSync(stdoutFile, 'w')
  const argv = ['--profile', 'headless', '--json', ...args]
  const env = cleanEnv({ DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key' })
  const child = eatmydata
    ? spawn('eatmydata', [DSH_BIN, ...argv], { cwd: workspace, env, stdio: ['ignore', fd, 'pipe'] })
    : spawn(DSH_BIN, argv, { cwd: workspace, env, stdio: ['ignore', fd, 'pipe'] })
  closeSync(fd)
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  const timer = setTimeout(() => child.kill('SIGKILL'), 300_000)
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stderr })
    })
  })
  return { child, stdoutFile, done }
}

/** Waits (bounded) until every thread of `pid` is stopped, as after SIGSTOP. */
export async function stopped(pid: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    let state = 'gone'
    try {
      state = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] ?? '?'
    } catch {
      return
    }
    if (state === 'T' || state === 't' || state === 'Z') return
    await new Promise((r) => setTimeout(r, 5))
  }
  throw new Error(`writer ${pid} did not stop after SIGSTOP`)
}

/**
 * A power cut of a running writer: SIGSTOP, wait until it is stopped, read what it had
 * shown (its stdout file: complete lines only), copy the image (`cp --sparse=always`: the
 * copy holds what the loop device had written to its backing file, not the upper page
 * cache, as after a power cut), SIGCONT. Returns the events shown before the cut.
 */
export async function powerCut(writer: Writer, image: string, copy: string): Promise<SessionEvent[]> {
  const pid = writer.child.pid!
  const running = writer.child.exitCode === null && writer.child.signalCode === null
  if (running) {
    writer.child.kill('SIGSTOP')
    await stopped(pid)
  }
  try {
    const shown = printedEvents(readFileSync(writer.stdoutFile, 'utf8'))
    sh(`cp --sparse=always ${image} ${copy}`)
    return shown
  } finally {
    if (running) writer.child.kill('SIGCONT')
  }
}
