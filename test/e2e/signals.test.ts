import { spawn } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DSH_BIN, cleanEnv, collect, tempDir, waitForOutput } from './helpers/dsh.js'
import { processesMatching, readSessionFile, sessionIdOf } from './helpers/session-file.js'
import { useDshWorld } from './helpers/world.js'

// 0100: a terminal closed (SIGHUP) or a SIGTERM ends dsh like Ctrl-C — cancel logged, the
// command's group killed, the session's temp root removed — with the signal's own exit code;
// the temp roots of sessions whose process died are swept by the next dsh.
// Several dsh processes share the mock model in the sweep test, so requests are not matched to one log.
const world = useDshWorld({ logsCheck: false })
const uid = process.getuid!()

async function until(predicate: () => boolean, timeoutMs = 15_000): Promise<void> {
  const start = Date.now()
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not reached in time')
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** A TMPDIR of the test's own, and the per-user base of temp roots under it. */
function tmp() {
  const dir = tempDir('dsh-e2e-tmpdir-')
  return { env: { TMPDIR: dir }, base: join(dir, `dsh-${uid}`) }
}

describe('signals', () => {
  it.each([['SIGTERM', 143], ['SIGHUP', 129]] as const)('%s mid-tool: exit %i, the cancel logged, the command gone, the temp root removed', async (signal, code) => {
    const { env, base } = tmp()
    const marker = `sleep ${6000 + Math.floor(Math.random() * 999)}`
    world.model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: `${marker}; echo never` } }] }])
    const child = world.spawn(['--profile', 'headless', 'wait'], { env })
    const done = collect(child)
    const id = sessionIdOf(await waitForOutput(child.stderr!, (t) => t.includes('→ bash')))
    await until(() => processesMatching(marker).length > 0)
    expect(existsSync(join(base, id))).toBe(true)
    child.kill(signal)
    const result = await done
    expect({ code: result.code, signal: result.signal }).toEqual({ code, signal: null })
    expect(result.stderr).toContain('ABORTED: the turn was cancelled')
    const { events } = readSessionFile(world.home, id)
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
    expect(events.filter((e) => e.type === 'tool/result')).toHaveLength(1)
    await until(() => processesMatching(marker).length === 0)
    expect(readdirSync(base)).toEqual([])
  })
})

describe('signals and a daemon that keeps the output', () => {
  it('SIGTERM mid-tool while a setsid daemon holds the command\'s output (shared sandbox): exit 143, no hang, the daemon gone', async () => {
    const { env, base } = tmp()
    const marker = `sleep ${5000 + Math.floor(Math.random() * 999)}`
    world.model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: `(setsid ${marker} &); ${marker}` } }] }])
    const child = world.spawn(['--profile', 'headless', 'wait'], { env })
    const done = collect(child)
    await waitForOutput(child.stderr!, (t) => t.includes('→ bash'))
    await until(() => processesMatching(marker).length >= 2)
    child.kill('SIGTERM')
    const result = await done
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 143, signal: null })
    await until(() => processesMatching(marker).length === 0)
    expect(readdirSync(base)).toEqual([])
  })
})

// dsh on a real pseudo-terminal whose other side closes (the terminal window goes away) once
// the command has started: the kernel sends SIGHUP and every later write to it fails with EIO.
const CLOSE_TERMINAL = `
import json, os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b''
deadline = time.time() + 60
while not os.path.exists('started') and time.time() < deadline:
    if select.select([fd], [], [], 0.05)[0]:
        try:
            out += os.read(fd, 65536)
        except OSError:
            break
os.close(fd)
_, status = os.waitpid(pid, 0)
print(json.dumps({'output': out.decode('utf-8', 'replace'), 'code': os.WEXITSTATUS(status) if os.WIFEXITED(status) else None, 'signal': None if os.WIFEXITED(status) else os.WTERMSIG(status)}))
`

describe('a closed terminal', () => {
  it('hangs dsh up like SIGTERM: exit 129 (no crash on the dead terminal), the cancel logged, the command gone, the temp root removed', async () => {
    const { env, base } = tmp()
    const marker = `sleep ${9000 + Math.floor(Math.random() * 999)}`
    world.model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: `touch started; ${marker}` } }] }])
    const python = spawn('python3', ['-c', CLOSE_TERMINAL, DSH_BIN, '--profile', 'headless', 'wait'], { cwd: world.workspace, env: cleanEnv(world.env(env)), stdio: ['pipe', 'pipe', 'pipe'] })
    const run = await collect(python, { timeoutMs: 90_000 })
    expect(run.code, run.stderr).toBe(0)
    const result = JSON.parse(run.stdout) as { output: string; code: number | null; signal: number | null }
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 129, signal: null })
    const id = sessionIdOf(result.output.replace(/\r\n/g, '\n'))
    const { events } = readSessionFile(world.home, id)
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
    expect(events.filter((e) => e.type === 'tool/result')).toHaveLength(1)
    await until(() => processesMatching(marker).length === 0)
    expect(readdirSync(base)).toEqual([])
  })
})

describe('temp roots of dead sessions', () => {
  it('the next dsh sweeps a killed session\'s temp root; a live session\'s, another user\'s, a symlink and an unmarked folder stay', async () => {
    const { env, base } = tmp()
    // a session whose process was killed with -9 mid-tool
    const deadMarker = `sleep ${7000 + Math.floor(Math.random() * 999)}`
    world.model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: deadMarker } }] }])
    const killed = world.spawn(['--profile', 'headless', 'start'], { env })
    const killedDone = collect(killed)
    const dead = sessionIdOf(await waitForOutput(killed.stderr!, (t) => t.includes('→ bash')))
    await until(() => processesMatching(deadMarker).length > 0)
    killed.kill('SIGKILL')
    await killedDone
    for (const pid of processesMatching(deadMarker)) process.kill(pid, 'SIGKILL')
    // its session root and the folder of its seccomp filter (0100), each with an owner file
    const deadSeccomp = readdirSync(base).filter((e) => /^seccomp-[0-9a-f]+$/.test(e))
    expect(deadSeccomp).toHaveLength(1)
    expect(readdirSync(base).sort()).toEqual([dead, `${dead}.owner`, deadSeccomp[0]!, `${deadSeccomp[0]}.owner`].sort())

    // a live session in another process
    const marker = `sleep ${8000 + Math.floor(Math.random() * 999)}`
    world.model.setScript([
      { toolCalls: [{ name: 'bash', arguments: { command: marker } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo hi > "$TMPDIR/mine"' } }] },
      { text: 'done' },
    ])
    const live = world.spawn(['--profile', 'headless', 'hold'], { env })
    const liveDone = collect(live)
    const liveId = sessionIdOf(await waitForOutput(live.stderr!, (t) => t.includes('→ bash')))
    await until(() => processesMatching(marker).length > 0)
    const liveSeccomp = readdirSync(base).filter((e) => /^seccomp-[0-9a-f]+$/.test(e) && e !== deadSeccomp[0])
    expect(liveSeccomp).toHaveLength(1)

    // another user's folder claiming a dead owner, a symlink to a folder of ours, a folder without an owner file
    const foreign = join(base, 'foreign')
    mkdirSync(foreign)
    writeFileSync(join(base, 'foreign.owner'), '999999999 1\n')
    chownSync(foreign, 65534, 65534)
    const target = tempDir('dsh-e2e-target-')
    writeFileSync(join(target, 'keep'), 'k')
    symlinkSync(target, join(base, 'link'))
    writeFileSync(join(base, 'link.owner'), '999999999 1\n')
    mkdirSync(join(base, 'unmarked'))

    const result = await world.headless(['go'], { env })
    expect(result.code, result.stderr).toBe(0)
    const next = sessionIdOf(result.stderr)
    expect(existsSync(join(base, dead))).toBe(false)
    expect(existsSync(join(base, `${dead}.owner`))).toBe(false)
    expect(existsSync(join(base, liveId))).toBe(true)
    expect(existsSync(join(base, next))).toBe(false) // its own, removed when it closed
    expect(existsSync(join(target, 'keep'))).toBe(true)
    expect(readdirSync(base).sort()).toEqual(['foreign', 'foreign.owner', 'link', 'link.owner', liveId, `${liveId}.owner`, liveSeccomp[0]!, `${liveSeccomp[0]}.owner`, 'unmarked'].sort())
    live.kill('SIGINT')
    expect((await liveDone).code).toBe(130)
  })
})
