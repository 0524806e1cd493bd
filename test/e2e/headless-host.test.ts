import { type Step } from '@dsh/testkit'
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { collect, tempDir, waitForOutput } from './helpers/dsh.js'
import { readSessionFile, sessionIdOf } from './helpers/session-file.js'
import { killMidTool, useDshWorld } from './helpers/world.js'

// Headless as a thin adapter over the host (issue 9) and the headless items of issue 12
// (1: shown means durable; 9: partial answer at max tokens, a gone workspace, the crash
// note, an unknown command, an env var named in its error), through the built `dsh`.
const world = useDshWorld({ logsCheck: false })
const sessionFiles = () => (existsSync(join(world.home, 'sessions')) ? readdirSync(join(world.home, 'sessions')).filter((f) => f.endsWith('.jsonl')) : [])

describe('headless on the host', () => {
  it('a turn cut at the token limit prints the partial answer, then MAX_TOKENS (exit 1)', async () => {
    world.model.setScript([{ text: 'half of the answer', finish: 'max-tokens' }])
    const result = await world.headless(['explain'])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('half of the answer\n')
    expect(result.stderr).toMatch(/^MAX_TOKENS: /m)
  })

  it('an unknown /cmd is UNKNOWN_COMMAND: message, exit 2, and creates no session', async () => {
    const result = await world.headless(['/frobnicate now'])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^UNKNOWN_COMMAND: Unknown command \/frobnicate\. Available: .*\/status/)
    expect(sessionFiles()).toEqual([])
  })

  it('DSH_PERMISSION_MODE=bogus is reported as the variable, before anything is created', async () => {
    const result = await world.headless(['hi'], { env: { DSH_PERMISSION_MODE: 'bogus' } })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('USAGE: DSH_PERMISSION_MODE must be one of read-only, workspace-write, danger-full-access, got "bogus"')
    expect(sessionFiles()).toEqual([])
  })

  it('resuming a session whose workspace was deleted says the workspace is gone', async () => {
    world.model.setScript([{ text: 'ok' }])
    const doomed = tempDir('dsh-doomed-')
    const first = await world.headless(['hi'], { cwd: doomed })
    expect(first.code).toBe(0)
    const id = sessionIdOf(first.stderr)
    rmSync(doomed, { recursive: true })
    const resumed = await world.headless(['--resume', id, 'again'])
    expect(resumed.code).toBe(1)
    expect(resumed.stderr).toContain(`WORKSPACE_GONE: the workspace of session ${id}, ${doomed}, no longer exists`)
    expect(resumed.stderr).not.toContain('SPAWN_FAILED')
    expect(world.model.requests).toHaveLength(1)
  })

  it('a crash repair on resume prints a note', async () => {
    const marker = `sleep ${6000 + Math.floor(Math.random() * 999)}`
    const id = await killMidTool(world, marker)
    world.model.setScript([{ text: 'resumed' }])
    const resumed = await world.headless(['--resume', id, 'go on'])
    expect(resumed.code).toBe(0)
    expect(resumed.stderr).toMatch(/^note: closed what a crash left open: 1 tool call given an error result, the turn marked interrupted$/m)
  })

  it('--json shows only durable events: after kill -9 at any point, every printed event is in the log, byte for byte', async () => {
    const steps: Step[] = []
    for (let i = 0; i < 12; i++) steps.push({ toolCalls: [{ name: 'bash', arguments: { command: `echo step ${i} > f${i}.txt` } }] })
    steps.push({ text: 'done' })
    for (const cut of [3, 11, 24, 40]) {
      world.model.setScript(steps)
      const child = world.spawn(['--profile', 'headless', '--json', 'many steps'])
      const done = collect(child)
      const stdout = await waitForOutput(child.stdout!, (t) => t.split('\n').length > cut)
      child.kill('SIGKILL')
      const result = await done
      const id = sessionIdOf(result.stderr)
      const printed = (stdout + result.stdout.slice(stdout.length)).split('\n').filter((l) => l.endsWith('}'))
      const { events } = readSessionFile(world.home, id)
      expect(printed.length).toBeGreaterThan(cut - 1)
      for (const line of printed) {
        const event = JSON.parse(line) as { seq: number }
        expect(events[event.seq], `seq ${event.seq} after a kill at line ${cut}`).toEqual(event)
      }
    }
  })
})
