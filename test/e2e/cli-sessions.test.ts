import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir } from './helpers/dsh.js'
import { sessionIdOf } from './helpers/session-file.js'
import { useDshWorld } from './helpers/world.js'

// each test makes its own workspaces
const world = useDshWorld({ logsCheck: true, workspace: false })
const dsh = (args: string[], cwd: string) => world.run(args, { cwd })

/** Runs one headless task in `cwd` and returns its session id. */
async function oneTask(cwd: string, task: string): Promise<string> {
  world.model.setScript([{ text: `answer to ${task}` }])
  const run = await dsh(['--profile', 'headless', task], cwd)
  expect(run.code).toBe(0)
  return sessionIdOf(run.stderr)
}

describe('dsh sessions', () => {
  it('lists stored sessions newest first (id, title, workspace, updated); --workspace filters, even for a deleted one', async () => {
    const a = tempDir('dsh-ws-a-')
    const b = tempDir('dsh-ws-b-')
    const first = await oneTask(a, 'first task')
    const second = await oneTask(b, 'second task')
    const third = await oneTask(a, 'third task')

    const json = await dsh(['sessions', '--json'], a)
    expect(json.code).toBe(0)
    const rows = JSON.parse(json.stdout) as { id: string; title: string | null; workspace: string; updated: string; events: number }[]
    expect(rows.map((r) => [r.id, r.workspace])).toEqual([[third, a], [second, b], [first, a]])
    for (const r of rows) {
      expect(Date.parse(r.updated)).not.toBeNaN()
      expect(r.events).toBeGreaterThan(0)
      expect(r.title === null || typeof r.title === 'string').toBe(true)
    }
    expect(rows.map((r) => r.updated)).toEqual([...rows.map((r) => r.updated)].sort().reverse())

    const onlyA = JSON.parse((await dsh(['sessions', '--json', '--workspace', '.'], a)).stdout) as { id: string }[]
    expect(onlyA.map((r) => r.id)).toEqual([third, first])

    const text = await dsh(['sessions'], a)
    const lines = text.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ID\s+UPDATED \(UTC\)\s+WORKSPACE\s+TITLE$/)
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/)[0])).toEqual([third, second, first])
    expect(lines[1]).toMatch(new RegExp(`^${third}\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\s+${a}`))

    rmSync(b, { recursive: true })
    const gone = JSON.parse((await dsh(['sessions', '--json', '--workspace', b], a)).stdout) as { id: string }[]
    expect(gone.map((r) => r.id)).toEqual([second])
  })

  it('an empty home lists nothing, says where it looked, and exits 0; bad arguments are USAGE', async () => {
    const ws = tempDir('dsh-ws-')
    const empty = await dsh(['sessions'], ws)
    expect(empty).toMatchObject({ code: 0, stdout: `No sessions in ${join(world.home, 'sessions')}.\n` })
    expect((await dsh(['sessions', '--json'], ws)).stdout).toBe('[]\n')
    const bad = await dsh(['sessions', '--frob'], ws)
    expect(bad.code).toBe(2)
    expect(bad.stderr).toBe('USAGE: unknown argument "--frob" for dsh sessions\n  hint: use: dsh sessions [--json] [--workspace DIR] [--profile NAME]\n')
  })

  it('SESSION_NOT_FOUND points at dsh sessions', async () => {
    const run = await dsh(['--profile', 'headless', '--resume', 'nosuch', 'hi'], tempDir('dsh-ws-'))
    expect(run.code).not.toBe(0)
    expect(run.stderr).toContain('SESSION_NOT_FOUND')
    expect(run.stderr).toContain('run `dsh sessions` to list the stored sessions')
  })
})

describe('launcher flags and help, as a user types them', () => {
  it('dsh --profile headless --help prints the launcher help and then the headless flags', async () => {
    const run = await dsh(['--profile', 'headless', '--help'], tempDir('dsh-ws-'))
    expect(run.code).toBe(0)
    const launcherAt = run.stdout.indexOf('dsh — an agent harness')
    const headlessAt = run.stdout.indexOf('usage: dsh --profile headless [options] "TASK"')
    expect(launcherAt).toBe(0)
    expect(headlessAt).toBeGreaterThan(launcherAt)
    expect(run.stdout).toContain('--permission-mode MODE')
    expect(world.model.requests).toEqual([])
  })

  it('a --patch after a headless flag and after the task is applied', async () => {
    const ws = tempDir('dsh-ws-')
    const patch = join(world.home, 'ro.patch.yml')
    writeFileSync(patch, '- id: permission\n  config: {default: read-only}\n')
    world.model.setScript([{ text: 'ok' }])
    const run = await dsh(['--profile', 'headless', '--json', 'the task', '--patch', patch], ws)
    expect(run.code).toBe(0)
    const events = run.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> })
    expect(events.find((e) => e.type === 'permission/preset')?.data).toEqual({ preset: 'read-only' })
    expect(events.find((e) => e.type === 'user/message')?.data.content).toEqual([{ type: 'text', text: 'the task' }])
  })
})
