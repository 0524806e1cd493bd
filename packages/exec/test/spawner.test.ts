import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { isDshError } from '@dsh/protocol'
import { afterAll, describe, expect, it } from 'vitest'
import type { LocalSubprocess } from '../src/subprocess/local.js'
import * as subprocessPlugin from '../src/plugins/subprocess.js'
import { cleanupDirs, processesInGroup, until } from './helpers.js'

afterAll(cleanupDirs)

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
}

function alive(pid: number): boolean {
  if (!existsSync(`/proc/${pid}/stat`)) return false
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
}

/** This process's live perl children (spawners). */
function perlChildren(): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => {
    try {
      return parentOf(pid) === process.pid && alive(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('perl\0')
    } catch {
      return false
    }
  })
}

/** A tree holding only the subprocess seam; `dispose` unplugs it. */
async function tree(config: Record<string, unknown> = {}): Promise<Context & { dispose: () => Promise<void> }> {
  const root = new Context()
  const fiber = await root.plugin(subprocessPlugin, subprocessPlugin.Config.parse({ killGraceMs: 300, ...config }))
  return Object.assign(root, { dispose: async () => { await fiber.dispose() } })
}

function local(root: Context): LocalSubprocess {
  return root.subprocess as unknown as LocalSubprocess
}

/** The parent of a command's leader (bash's $PPID: the process that forked it). */
async function forkedBy(root: Context): Promise<{ parent: number }> {
  let output = ''
  await root.subprocess.run(['bash', '-c', 'echo $PPID'], { cwd: '/', onData: (c) => { output += c.toString() } })
  return { parent: Number(output.trim()) }
}

describe('the spawner (0080)', () => {
  it('forks each command: the command is its child, not dsh\'s, and it goes away with the tree', async () => {
    const root = await tree()
    const { parent } = await forkedBy(root)
    const spawner = local(root).spawnerPid!
    expect(spawner).toBeGreaterThan(0)
    expect(parent).toBe(spawner)
    expect(parent).not.toBe(process.pid)
    // one spawner for every command
    expect((await forkedBy(root)).parent).toBe(spawner)
    await root.dispose()
    await until(() => !alive(spawner))
  })

  it('starts with the tree, before the first command (0095), and a tree disposed before it is up leaves no perl behind', async () => {
    const root = await tree()
    await until(() => local(root).spawnerPid !== undefined)
    const spawner = local(root).spawnerPid!
    expect((await forkedBy(root)).parent).toBe(spawner)
    await root.dispose()
    await until(() => !alive(spawner))

    const early = await tree()
    const seam = local(early)
    const perls = perlChildren()
    expect(perls.length).toBe(1) // forked at mount, still starting
    await early.dispose()
    await until(() => perls.every((pid) => !alive(pid)))
    expect(seam.spawnerPid).toBeUndefined()
  })

  it('falls back to Node spawn, with the same results, when perl is missing or dies at start', async () => {
    for (const perlPath of ['/nonexistent/perl', '/bin/false']) {
      const root = await tree({ perlPath })
      let output = ''
      const result = await root.subprocess.run(['bash', '-c', 'echo out; echo err >&2; exit 4'], { cwd: '/', onData: (c) => { output += c.toString() } })
      expect(result).toEqual({ exitCode: 4, signal: null, timedOut: false, aborted: false })
      expect(output).toBe('out\nerr\n')
      expect((await forkedBy(root)).parent).toBe(process.pid)
      expect(local(root).spawnerPid).toBeUndefined()
      await root.dispose()
    }
  })

  it('is not steered by the user\'s PERL5OPT / PERL5LIB', async () => {
    const saved = { ...process.env }
    process.env.PERL5OPT = '-Mdsh_no_such_module'
    process.env.PERL5LIB = '/nonexistent'
    try {
      const root = await tree()
      expect((await forkedBy(root)).parent).toBe(local(root).spawnerPid)
      await root.dispose()
    } finally {
      process.env.PERL5OPT = saved.PERL5OPT
      process.env.PERL5LIB = saved.PERL5LIB
      if (saved.PERL5OPT === undefined) delete process.env.PERL5OPT
      if (saved.PERL5LIB === undefined) delete process.env.PERL5LIB
    }
  })

  it('killed mid-command: the call settles with SUBPROCESS_LOST, its group is killed, the next command starts a new spawner', async () => {
    const root = await tree()
    let pgid = 0
    const pending = root.subprocess.run(['bash', '-c', '(sleep 300) & sleep 300'], { cwd: '/', onSpawn: (pid) => { pgid = pid } })
    const outcome = pending.then(() => null, (e: unknown) => e)
    await until(() => pgid > 0 && processesInGroup(pgid).length >= 3)
    const spawner = local(root).spawnerPid!
    process.kill(spawner, 'SIGKILL')
    const error = await outcome
    expect(isDshError(error, 'SUBPROCESS_LOST')).toBe(true)
    expect((error as Error).message).toMatch(/spawner exited while bash ran/)
    expect(processesInGroup(pgid)).toEqual([])
    const next = await forkedBy(root)
    expect(next.parent).not.toBe(spawner)
    expect(next.parent).toBe(local(root).spawnerPid)
    expect(next.parent).not.toBe(process.pid)
    await root.dispose()
  })

  it('dsh killed -9: the spawner sees EOF, SIGKILLs the live groups and exits (no orphan in /proc, no socket directory left in /tmp)', async () => {
    const script = `
      import { Context } from '@deepseek-ai/cordis'
      import * as sp from './packages/exec/dist/plugins/subprocess.js'
      const ctx = new Context()
      await ctx.plugin(sp, sp.Config.parse({}))
      const pgids = []
      for (let i = 0; i < 3; i++) {
        ctx.subprocess.run(['bash', '-c', 'trap "" TERM; (trap "" TERM; sleep 300) & sleep 300'], { cwd: '/', onSpawn: (pid) => {
          pgids.push(pid)
          if (pgids.length === 3) console.log(JSON.stringify({ pgids, spawner: ctx.subprocess.spawnerPid }))
        } })
      }`
    const root = path.resolve(import.meta.dirname, '..', '..', '..')
    // the built package (npm test builds first): a plain node process, as dsh runs
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] })
    const line = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString())))
    const { pgids, spawner } = JSON.parse(line) as { pgids: number[]; spawner: number }
    await until(() => pgids.every((g) => processesInGroup(g).length >= 3))
    expect(parentOf(pgids[0]!)).toBe(spawner)
    // perl -e SCRIPT SOCKET: the socket sits alone in the spawner's mkdtemp directory
    const socketPath = readFileSync(`/proc/${spawner}/cmdline`, 'utf8').split('\0').filter(Boolean).at(-1)!
    const socketDir = path.dirname(socketPath)
    expect(path.basename(socketDir)).toMatch(/^dsh-spawn-/)
    expect(existsSync(socketPath)).toBe(true)
    child.kill('SIGKILL')
    await until(() => !alive(spawner) && pgids.every((g) => processesInGroup(g).length === 0))
    expect(pgids.flatMap(processesInGroup)).toEqual([])
    expect(existsSync(socketDir)).toBe(false)
  })
})
