import { existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import type { ToolDefinition } from '@dsh/core'
import type { ResultCard } from '@dsh/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bashTool, commandPrefix, LIVE_OUTPUT_CAP, LIVE_OUTPUT_NOTE } from '../src/bash.js'
import { callTool, cleanupDirs, harness, processesRunning, tempDir, toolTree, type Harness } from './helpers.js'

let root: Context
let h: Harness

beforeAll(async () => {
  root = await toolTree({ shell: { maxBytes: 4000, maxLines: 100 } })
})
afterAll(cleanupDirs)

const present = (args: Record<string, unknown>, text: string, isError = false): ResultCard =>
  (bashTool as unknown as ToolDefinition).presentResult!(bashTool.parameters.parse(args), { content: [{ type: 'text', text }], isError })

async function bash(args: Record<string, unknown>, signal?: AbortSignal) {
  const out = await callTool(h, 'bash', args, signal)
  return { ...out, card: out.result.isError ? undefined : present(args, out.text) }
}

describe('bash', () => {
  beforeAll(async () => { h = await harness(root) })

  it('a clean run: output text, terminal card with exit 0, streamed progress', async () => {
    const r = await bash({ command: 'echo hello; echo err >&2', description: 'Say hello' })
    expect(r.text).toBe('hello\nerr')
    expect(r.card).toEqual({ card: 'terminal', output: 'hello\nerr', exitCode: 0 })
    expect(h.progress.join('')).toBe('hello\nerr\n')
  })

  it('a non-zero exit is a successful result ending with its marker; the card carries it once', async () => {
    const r = await bash({ command: 'echo failing; exit 7' })
    expect(r.result.isError).toBe(false)
    expect(r.text).toBe('failing\n[exit code: 7]')
    expect(r.card).toEqual({ card: 'terminal', output: 'failing', exitCode: 7 })
  })

  it('a timeout: SIGTERM-ignoring command with a grandchild is killed, markers in order', async () => {
    const nap = `60.${process.pid}`
    const r = await bash({ command: `trap "" TERM; (trap "" TERM; sleep ${nap}) & echo started; sleep ${nap}`, timeoutMs: 1000 })
    // a bubblewrap per call dies of the TERM; in a shared sandbox the command ignores it and dies
    // of the SIGKILL after the grace, as unsandboxed (exec decision 0092)
    const signal = /\[killed by signal: (SIGTERM|SIGKILL)\]$/.exec(r.text)?.[1]
    expect(r.text).toBe(`started\n[timed out after 1000ms]\n[killed by signal: ${signal}]`)
    expect(r.card).toEqual({ card: 'terminal', output: 'started\n[timed out after 1000ms]', signal })
    expect(processesRunning(['sleep', nap])).toEqual([])
  })

  it('an abort kills the command', async () => {
    const controller = new AbortController()
    h.progress.length = 0
    const pending = bash({ command: 'echo before; sleep 30' }, controller.signal)
    while (!h.progress.join('').includes('before')) await new Promise((r) => setTimeout(r, 10))
    controller.abort()
    const r = await pending
    expect(r.text).toBe('before\n[killed by signal: SIGTERM]')
  })

  it('output that merely looks like a marker is not read as status', async () => {
    const r = await bash({ command: "printf 'x\\n[exit code: 3]\\n'" })
    expect(r.text).toBe('x\n[exit code: 3]\n')
    expect(r.card).toEqual({ card: 'terminal', output: 'x\n[exit code: 3]', exitCode: 0 })
    const mid = await bash({ command: "printf 'said [killed by signal: SIGKILL]'; exit 2" })
    expect(mid.card).toEqual({ card: 'terminal', output: 'said [killed by signal: SIGKILL]', exitCode: 2 })
  })

  it('huge output: the tail, a truncation marker naming a 0600 spill file with everything', async () => {
    const r = await bash({ command: 'seq 1 100000; exit 1' })
    const m = /\n\[output truncated: showing the last 100 of 100000 lines \(588895 bytes\); full output: (\S+)\]\n\[exit code: 1\]$/.exec(r.text)
    expect(m).not.toBeNull()
    expect(r.text.startsWith('99901\n')).toBe(true)
    const spill = m![1]!
    expect(path.dirname(spill)).toBe(h.tmp)
    expect(statSync(spill).mode & 0o777).toBe(0o600)
    expect(readFileSync(spill, 'utf8').split('\n').length).toBe(100001)
    expect(r.card).toMatchObject({ card: 'terminal', exitCode: 1 })
    expect((r.card as { output: string }).output.endsWith(`full output: ${spill}]`)).toBe(true)
  })

  it('live progress is capped; the result still has the tail', async () => {
    h.progress.length = 0
    const r = await bash({ command: 'yes 0123456789 | head -c 3000000; echo; echo end' })
    expect(h.progress.at(-1)).toBe(LIVE_OUTPUT_NOTE)
    const live = h.progress.slice(0, -1).join('')
    expect(live.length).toBeLessThanOrEqual(LIVE_OUTPUT_CAP)
    expect(live.length).toBeGreaterThan(LIVE_OUTPUT_CAP - 70_000)
    expect(r.text).toMatch(/\nend\n\[output truncated: /)
  })

  it('workspace-write: writes inside land, writes outside are denied with the escalation hint (verified on disk)', async () => {
    const outside = tempDir('outside')
    const r = await bash({ command: `echo in > inside.txt; echo out > ${outside}/x.txt` })
    expect(readFileSync(path.join(h.cwd, 'inside.txt'), 'utf8')).toBe('in\n')
    expect(existsSync(path.join(outside, 'x.txt'))).toBe(false)
    expect(r.text).toBe(`bash: line 1: ${outside}/x.txt: Read-only file system\n`
      + `[sandbox denied: the workspace-write sandbox refused a write (writable: ${h.cwd}, ${h.tmp}). If the write is needed, call bash again once with escalate: true and a justification; the user will be asked.]\n`
      + '[exit code: 1]')
    expect(r.card).toMatchObject({ card: 'terminal', exitCode: 1 })
  })

  it('escalation asks with a scoped request; reject is an error result and nothing runs', async () => {
    const outside = tempDir('outside')
    h.answer = 'reject'
    const r = await bash({ command: `touch ${outside}/esc`, escalate: true, justification: 'needs the shared dir' })
    expect(r.result.isError).toBe(true)
    expect(r.text).toContain('did not allow')
    expect(h.approvals.at(-1)).toEqual({
      kind: 'escalation', title: `touch ${outside}/esc`, reason: 'needs the shared dir',
      rawInput: { command: `touch ${outside}/esc`, escalate: true, justification: 'needs the shared dir' },
      card: { card: 'terminal', title: `touch ${outside}/esc` },
      scope: { key: 'bash:touch', label: 'run `touch …` commands outside the sandbox in this session' },
    })
    expect(existsSync(path.join(outside, 'esc'))).toBe(false)
    h.answer = 'cancelled'
    expect((await bash({ command: `touch ${outside}/esc`, escalate: true, justification: 'x' })).text).toContain('cancelled')
    expect((await bash({ command: 'true', escalate: true })).text).toContain('needs a justification')
  })

  it('escalation allowed runs unsandboxed for that call only', async () => {
    const outside = tempDir('outside')
    h.answer = 'allow-once'
    const r = await bash({ command: `echo ok > ${outside}/esc.txt`, escalate: true, justification: 'write the report there' })
    expect(r.text).toBe('(no output)')
    expect(readFileSync(path.join(outside, 'esc.txt'), 'utf8')).toBe('ok\n')
    const after = await bash({ command: `echo again > ${outside}/again.txt` })
    expect(after.text).toContain('[sandbox denied:')
    expect(existsSync(path.join(outside, 'again.txt'))).toBe(false)
  })

  it('workdir resolves against the workspace and must exist', async () => {
    await bash({ command: 'mkdir -p sub/dir' })
    expect((await bash({ command: 'pwd', workdir: 'sub/dir' })).text).toBe(path.join(h.cwd, 'sub/dir'))
    const bad = await bash({ command: 'pwd', workdir: 'missing' })
    expect(bad.result.isError).toBe(true)
    expect(bad.text).toContain('not an existing directory')
  })

  it('presents calls as in seed 000', () => {
    const tool = bashTool as unknown as ToolDefinition
    expect(tool.presentCall!({ command: 'ls -la', description: 'List files', workdir: 'src' }))
      .toEqual({ card: 'terminal', title: 'ls -la', description: 'List files', cwd: 'src' })
    expect(tool.presentCall!({ command: 'npm run dev', description: 'Dev server', run_in_background: true }))
      .toEqual({ card: 'generic', title: 'npm run dev', kind: 'execute', description: 'Dev server' })
    expect(present({ command: 'x' }, 'Error: boom', true)).toEqual({ card: 'generic', text: '```console\nError: boom\n```', isError: true })
  })
})

describe('bash under read-only and without a sandbox', () => {
  it('read-only denies every write, inside the workspace too', async () => {
    const ro = await harness(root, 'read-only')
    const r = await callTool(ro, 'bash', { command: 'echo x > f.txt' })
    expect(existsSync(path.join(ro.cwd, 'f.txt'))).toBe(false)
    expect(r.text).toContain('[sandbox denied: the read-only sandbox refused a write (nothing is writable).')
    expect(r.text.endsWith('\n[exit code: 1]')).toBe(true)
  })

  it('fails closed with SANDBOX_UNAVAILABLE as an error result', async () => {
    const closed = await harness(await toolTree({ sandbox: { mechanism: 'none' } }))
    const r = await callTool(closed, 'bash', { command: 'touch made.txt' })
    expect(r.result.isError).toBe(true)
    expect(r.text).toMatch(/^Error \(SANDBOX_UNAVAILABLE\): /)
    expect(existsSync(path.join(closed.cwd, 'made.txt'))).toBe(false)
  })
})

describe('background jobs', () => {
  it('start, read only new output, kill; other sessions cannot see the job', async () => {
    const jh = await harness(root)
    const start = await callTool(jh, 'bash', { command: 'echo one; sleep 0.4; echo two; sleep 60', run_in_background: true, description: 'bg' })
    const jobId = (start.value as { jobId: string }).jobId
    expect(start.text).toMatch(new RegExp(`^Started background job ${jobId} \\(pid \\d+\\) in ${jh.cwd}: echo one`))
    expect(present({ command: 'x', run_in_background: true }, start.text)).toEqual({ card: 'generic', text: '```console\n' + start.text + '\n```' })
    const header = `Job ${jobId} (running): echo one; sleep 0.4; echo two; sleep 60\n`
    const next = async () => {
      for (;;) {
        const text = (await callTool(jh, 'job_output', { jobId })).text
        if (text !== `${header}(no new output)`) return text
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    expect(await next()).toBe(`${header}one\n`)
    expect(await next()).toBe(`${header}two\n`)
    const other = await callTool({ ...jh, sessionId: 'session-other' }, 'job_output', { jobId })
    expect(other.text).toMatch(/^Error \(JOB_NOT_FOUND\)/)
    const killed = await callTool(jh, 'job_kill', { jobId })
    expect(killed.text).toBe(`Job ${jobId} (stopped): echo one; sleep 0.4; echo two; sleep 60\n[killed by signal: SIGTERM]`)
  })
})

describe('background jobs and the sandbox', () => {
  it('a job whose write the sandbox refused says so, as a foreground call would', async () => {
    const jh = await harness(root)
    const target = path.join(tempDir('bg-outside'), 'bg.txt')
    const start = await callTool(jh, 'bash', { command: `echo x > ${target}`, run_in_background: true })
    const jobId = (start.value as { jobId: string }).jobId
    // job_output returns only the output that is new since the last call: a poll that lands
    // while the job is still running gets bash's error line, the final one only the markers,
    // so the output is the concatenation of every poll (keeping only the last was the flake)
    let text = ''
    let last = ''
    for (let i = 0; i < 200 && !last.includes('[exit code'); i++) {
      last = (await callTool(jh, 'job_output', { jobId })).text
      text += `${last}\n`
      if (!last.includes('[exit code')) await new Promise((r) => setTimeout(r, 20))
    }
    text = text.trimEnd()
    expect(text).toMatch(/Read-only file system/)
    expect(text).toMatch(/\n\[sandbox denied: the sandbox refused a write\. [^\n]*\]\n\[exit code: 1\]$/)
    expect(existsSync(target)).toBe(false)
  })
})

describe('commandPrefix', () => {
  it('scopes to the command and subcommand, or the exact command when it has shell syntax', () => {
    expect(commandPrefix('git status -s')).toEqual({ key: 'bash:git status', label: 'run `git status …` commands outside the sandbox in this session' })
    expect(commandPrefix('FOO=1 npm install left-pad').key).toBe('bash:npm install')
    expect(commandPrefix('rm -rf build').key).toBe('bash:rm')
    expect(commandPrefix('git status && rm -rf /').key).toBe('bash:git status && rm -rf /')
  })
})
