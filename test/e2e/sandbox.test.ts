import { deriveMessages } from '@dsh/core'
import { buildChatRequest } from '@dsh/llm-openai'
import { expectedBodies, requestsFromLog } from '@dsh/testkit'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { tempDir } from './helpers/dsh.js'
import { readSessionFile, sessionIdOf } from './helpers/session-file.js'
import { useDshWorld } from './helpers/world.js'

// Issue 4, as a new user would: a scripted model asks bash to write inside and outside the
// workspace under the default preset and under read-only; the disk says what happened.
// Every request any dsh run of a test sent is what a stored session log derives (logsCheck).
const world = useDshWorld({ logsCheck: true })
let outside: string

beforeEach(() => {
  // not under /tmp's own tree of the workspace, and never a --tmpfs path: a real directory
  outside = tempDir('dsh-outside-')
})

/** The text of the tool result the model received in request `index`. */
function toolText(index: number): string {
  const messages = (world.model.requests[index]!.body as { messages: { role: string; content: string }[] }).messages
  return messages.filter((m) => m.role === 'tool').at(-1)!.content
}

function expectLogged(home: string, stderr: string) {
  const { events } = readSessionFile(home, sessionIdOf(stderr))
  expect(world.model.requests.map((r) => r.body)).toEqual(expectedBodies(requestsFromLog(events, deriveMessages), buildChatRequest))
}

describe('bash in the sandbox', () => {
  it('workspace-write (default): writes inside land, writes outside are denied and reported', async () => {
    const target = join(outside, 'escaped.txt')
    world.model.setScript([
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo inside > inside.txt && cat inside.txt' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: `echo out > ${target}` } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'exit 42' } }] },
      { text: 'done' },
    ])
    const result = await world.headless(['write things'])
    expect(result.code).toBe(0)
    expect(readFileSync(join(world.workspace, 'inside.txt'), 'utf8')).toBe('inside\n')
    expect(existsSync(target)).toBe(false)
    expect(toolText(1)).toBe('inside')
    expect(toolText(2)).toMatch(/Read-only file system/)
    expect(toolText(2)).toMatch(/\n\[sandbox denied: [^\n]+\]\n\[exit code: 1\]$/)
    expect(toolText(3)).toMatch(/\[exit code: 42\]$/)
    expectLogged(world.home, result.stderr)
  })

  it('read-only: no write lands anywhere, even in the workspace', async () => {
    world.model.setScript([
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo x > inside.txt' } }] },
      { toolCalls: [{ name: 'write', arguments: { path: 'via-tool.txt', content: 'x' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'cat /etc/hostname > /dev/null && echo readable' } }] },
      { text: 'done' },
    ])
    const result = await world.headless(['--permission-mode', 'read-only', 'try to write'])
    expect(result.code).toBe(0)
    expect(existsSync(join(world.workspace, 'inside.txt'))).toBe(false)
    expect(existsSync(join(world.workspace, 'via-tool.txt'))).toBe(false)
    expect(toolText(1)).toMatch(/\[sandbox denied: [^\n]+\]\n\[exit code: [12]\]$/)
    expect(toolText(2)).toMatch(/PATH_DENIED|read-only/i)
    expect(toolText(3)).toBe('readable')
    const { events } = readSessionFile(world.home, sessionIdOf(result.stderr))
    expect(events.find((e) => e.type === 'permission/preset')).toMatchObject({ data: { preset: 'read-only' } })
  })

  it('headless cannot approve an escalation: the model is told, nothing runs unconfined', async () => {
    const target = join(outside, 'escalated.txt')
    world.model.setScript([
      { toolCalls: [{ name: 'bash', arguments: { command: `echo out > ${target}`, escalate: true, justification: 'need to write outside' } }] },
      { text: 'understood' },
    ])
    const result = await world.headless(['escalate'])
    expect(result.code).toBe(0)
    expect(existsSync(target)).toBe(false)
    expect(toolText(1)).toContain('No one can approve a command that would run outside the sandbox on this surface')
    const { events } = readSessionFile(world.home, sessionIdOf(result.stderr))
    expect(events.find((e) => e.type === 'approval/decision')).toMatchObject({ data: { outcome: 'reject' } })
  })

  it('danger-full-access runs without a sandbox', async () => {
    const target = join(outside, 'free.txt')
    world.model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: `echo free > ${target}` } }] }, { text: 'ok' }])
    const result = await world.headless(['--permission-mode', 'danger-full-access', 'write outside'])
    expect(result.code).toBe(0)
    expect(readFileSync(target, 'utf8')).toBe('free\n')
    rmSync(target)
  })
})
