import { deriveMessages } from '@dsh/core'
import { buildChatRequest } from '@dsh/llm-openai'
import type { SessionEvent } from '@dsh/protocol'
import { expectedBodies, longSessionLog, requestsFromLog, startMockModel, type MockModel } from '@dsh/testkit'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runDsh, tempDir } from './helpers/dsh.js'
import { readSessionFile } from './helpers/session-file.js'

// Issue 13 "Bad input": a session log of 100,000 events, resumed and continued.
let model: MockModel
beforeAll(async () => { model = await startMockModel() })
afterAll(async () => { await model.close() })

/** The requests the log says left after `from` (header + history derived at that moment). */
function requestsAfter(events: SessionEvent[], from: number) {
  const before = events.slice(0, from)
  return requestsFromLog(events.slice(from), (prefix) => deriveMessages([...before, ...prefix]))
}

describe('a long session', () => {
  it('resumes a 100,000-event log and continues it: the whole history is sent, the old log stays byte for byte, new events follow it', async () => {
    const home = tempDir('dsh-home-')
    const workspace = tempDir('dsh-ws-')
    const id = 'long-100k'
    mkdirSync(join(home, 'sessions'), { recursive: true })
    const file = join(home, 'sessions', `${id}.jsonl`)
    const old = longSessionLog(100_000, { id, cwd: workspace, compactEvery: 50 })
    writeFileSync(file, old)
    const oldMessages = deriveMessages(readSessionFile(home, id).events)
    model.requests.length = 0
    model.setScript([
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo continued > out.txt', description: 'write a file' } }] },
      { text: 'continued fine' },
    ])
    const result = await runDsh(['--profile', 'headless', '--resume', id, 'one more change'], {
      cwd: workspace, env: { DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key' },
    })
    expect(result.stderr).toMatch(/^session: long-100k\n/)
    expect(result.code, result.stderr.slice(-2000)).toBe(0)
    expect(result.stdout).toBe('continued fine\n')
    expect(readFileSync(join(workspace, 'out.txt'), 'utf8')).toBe('continued\n')

    // the log on disk: the old bytes untouched, then the new turn, seq = index throughout
    const after = readFileSync(file, 'utf8')
    expect(after.startsWith(old)).toBe(true)
    const { events } = readSessionFile(home, id)
    expect(events.every((e, i) => e.seq === i)).toBe(true)
    const turnStart = events.findIndex((e, i) => i >= 100_000 && e.type === 'turn/start')
    expect(turnStart).toBeGreaterThanOrEqual(100_000)
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
    expect(events.slice(turnStart).filter((e) => e.type === 'tool/result')).toHaveLength(1)

    // what the model saw: the whole old history plus the new prompt, and exactly what the log derives
    expect(model.requests).toHaveLength(2)
    const first = model.requests[0]!.body as { messages: { role: string; content: unknown }[] }
    expect(oldMessages.length).toBeGreaterThan(100) // the history since the last summary, which leads it
    expect(oldMessages[0]).toMatchObject({ role: 'user', content: [{ text: expect.stringMatching(/^\[Summary of earlier conversation\]/) }] })
    expect(first.messages.length).toBe(1 + oldMessages.length + 1) // system + old history + the new prompt
    expect(first.messages.at(-1)).toEqual({ role: 'user', content: 'one more change' })
    expect(model.requests.map((r) => r.body)).toEqual(expectedBodies(requestsAfter(events, turnStart), buildChatRequest))
  })
})
