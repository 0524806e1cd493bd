import { spawn } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DSH_BIN, cleanEnv, collect } from './helpers/dsh.js'
import { processesMatching, readSessionFile, sessionIdOf } from './helpers/session-file.js'
import { useDshWorld } from './helpers/world.js'

// Escape sequences a model (or a file it read) can put in a command or an answer: set the
// terminal's title (OSC), clear the screen (CSI), ring the bell, a one-byte C1 CSI.
const HOSTILE = '\u001b]0;pwned\u0007\u001b[2J\u009b31m'

async function until(predicate: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not reached')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const world = useDshWorld({ logsCheck: false })

function script(): void {
  world.model.setScript([
    { toolCalls: [{ name: 'bash', arguments: { command: `echo hi ${HOSTILE}` } }] },
    { text: `done ${HOSTILE}\ttab\nline two` },
  ])
}

describe('headless output on a terminal', () => {
  it('progress lines on stderr show control characters instead of obeying them; a piped answer is unchanged', async () => {
    script()
    const result = await world.headless(['escape'])
    expect(result.code).toBe(0)
    expect(result.stderr).toContain('→ bash: echo hi \\x1b]0;pwned\\x07\\x1b[2J\\x9b31m')
    expect(result.stderr).not.toMatch(/[\u001b\u0007\u009b]/)
    expect(result.stdout).toBe(`done ${HOSTILE}\ttab\nline two\n`)
  })

  it('on a tty the answer keeps tabs and newlines but shows escape sequences as text', async () => {
    script()
    // script(1) gives dsh a real pseudo-terminal as stdout and stderr
    const command = `${DSH_BIN} --profile headless escape`
    const run = await collect(spawn('script', ['-qec', command, '/dev/null'], { cwd: world.workspace, env: cleanEnv(world.env()), stdio: ['pipe', 'pipe', 'pipe'] }))
    expect(run.code).toBe(0)
    const seen = run.stdout.replace(/\r\n/g, '\n')
    expect(seen).toContain('done \\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\ttab\nline two\n')
    expect(seen).toContain('→ bash: echo hi \\x1b]0;pwned')
    expect(seen).not.toMatch(/[\u001b\u0007\u009b]/)
  })
})

describe('headless task from stdin', () => {
  it('a task over 16 MiB is PROMPT_TOO_LARGE (exit 2): no session, no request, stdin drained without EPIPE', async () => {
    world.model.setScript([{ text: 'never' }])
    const result = await world.headless(['-'], { input: 'a'.repeat(16 * 1024 * 1024 + 1), timeoutMs: 120_000 })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('PROMPT_TOO_LARGE: the task on stdin is 16777217 bytes; at most 16777216 (16 MiB) are read')
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect(world.model.requests).toEqual([])
    expect(existsSync(join(world.home, 'sessions')) ? readdirSync(join(world.home, 'sessions')) : []).toEqual([])
  })

  it('a task of exactly 16 MiB still runs', async () => {
    world.model.setScript([{ text: 'read it all' }])
    const result = await world.headless(['-'], { input: 'b'.repeat(16 * 1024 * 1024), timeoutMs: 120_000 })
    expect(result.code).toBe(0)
    expect(result.stdout).toBe('read it all\n')
    expect(world.model.requests).toHaveLength(1)
  })
})

describe('headless stdout closed by its reader', () => {
  it('`--json | head -1`: the next write cancels the turn, STDOUT_CLOSED (exit 1), no EPIPE trace, no lock, nothing left running', async () => {
    // the reader goes away while the command runs; dsh notices at its next write (the tool result)
    world.model.setScript([
      { toolCalls: [{ name: 'bash', arguments: { command: 'sleep 1.5; echo slept' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'sleep 4321.5' } }], delayMs: 3000, chunkSize: 1 },
      { text: 'never shown' },
    ])
    const child = spawn(DSH_BIN, ['--profile', 'headless', '--json', 'sleep'], { cwd: world.workspace, env: cleanEnv(world.env()), stdio: ['pipe', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d })
    child.stdin.end()
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d })
    // read until the command runs, then go away as `head` does
    await until(() => stdout.includes('"tool/call"') && processesMatching('sleep 1.5; echo slept').length > 0)
    child.stdout.destroy()
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
      child.on('exit', (c) => { clearTimeout(timer); resolve(c) })
    })
    expect(stderr).toContain('STDOUT_CLOSED')
    expect(stderr).not.toContain('Unhandled')
    expect(stderr).not.toMatch(/\n\s+at /)
    expect(code).toBe(1)
    const id = sessionIdOf(stderr)
    expect(existsSync(join(world.home, 'sessions', `${id}.lock`))).toBe(false)
    expect(processesMatching('sleep 4321.5')).toEqual([])
    const events = readSessionFile(world.home, id).events
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
    expect(events.filter((e) => e.type === 'tool/call')).toHaveLength(1)
    expect(world.model.requests.length).toBeLessThanOrEqual(2)
  })
})
