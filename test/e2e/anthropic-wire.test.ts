import { deriveMessages } from '@dsh/core'
import { buildMessagesRequest } from '@dsh/llm-anthropic'
import { expectedBodies, requestsFromLog, startMockModel, type MockModel } from '@dsh/testkit'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runDsh, tempDir } from './helpers/dsh.js'
import { readSessionFile } from './helpers/session-file.js'

// Decision 0090: the Anthropic body is joined from cached per-message JSON and carries
// prompt-cache breakpoints that move every step. Checked on the wire the mock recorded.
let model: MockModel
beforeAll(async () => { model = await startMockModel() })
afterAll(async () => { await model.close() })

type Block = { type: string; cache_control?: unknown }
type Body = { system?: Block[]; messages: { role: string; content: Block[] }[] }
const marked = (body: Body): number[] => body.messages.flatMap((m, i) => m.content.some((b) => b.cache_control !== undefined) ? [i] : [])
const unmark = (m: Body['messages'][number]) => ({ ...m, content: m.content.map(({ cache_control: _, ...b }) => b) })

describe('headless --provider anthropic', () => {
  it('sends exactly the bodies the log derives, with the breakpoints on the last two user messages and an unchanged prefix before them', async () => {
    const home = tempDir('dsh-home-')
    const workspace = tempDir('dsh-ws-')
    const bash = (command: string) => ({ name: 'bash', arguments: { command, description: command } })
    model.requests.length = 0
    model.setScript([
      { reasoning: 'think first', toolCalls: [bash('echo one > a.txt')] },
      { toolCalls: [bash('cat a.txt'), bash('echo "é \u2028 \\"quoted\\"" >> a.txt')] }, // parallel: one user message of two results
      { text: 'no tool this time, but ', toolCalls: [bash('exit 3')] },
      { reasoning: 'and again', toolCalls: [bash('wc -l a.txt')] },
      { toolCalls: [bash('echo five')] },
      { text: 'all done' },
    ])
    const result = await runDsh(['--profile', 'headless', '--permission-mode', 'danger-full-access', '--provider', 'anthropic', 'do the steps'], {
      cwd: workspace, env: { DSH_HOME: home, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'mock-key' },
    })
    expect(result.code, result.stderr.slice(-2000)).toBe(0)
    expect(result.stdout).toBe('all done\n')
    expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('one\né \u2028 "quoted"\n')

    const requests = model.requests
    expect(requests.map((r) => r.path)).toEqual(Array(6).fill('/v1/messages'))
    const id = /^session: (\S+)/.exec(result.stderr)![1]!
    const { events } = readSessionFile(home, id)
    const bodies = requests.map((r) => r.body as Body)
    // model-visible means logged: each body is the uncached build of what the log derives
    expect(bodies).toEqual(expectedBodies(requestsFromLog(events, deriveMessages), buildMessagesRequest))

    for (const [k, body] of bodies.entries()) {
      expect(body.system?.at(-1)?.cache_control).toEqual({ type: 'ephemeral' })
      const users = body.messages.flatMap((m, i) => m.role === 'user' ? [i] : [])
      expect(marked(body)).toEqual(users.slice(-2))
      if (k === 0) continue
      // the previous request ended at this request's second-to-last user message: everything
      // up to it is the same (breakpoints aside), so the prefix cached last step is read back
      const previous = bodies[k - 1]!
      const end = users.at(-2)!
      expect(end).toBe(previous.messages.length - 1)
      expect(body.messages.slice(0, end + 1).map(unmark)).toEqual(previous.messages.map(unmark))
    }
    expect(marked(bodies[5]!)).toEqual([8, 10])
  })
})
