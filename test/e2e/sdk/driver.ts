// The TypeScript side of the parity table: runs one scenario's plan with @dsh/sdk.
import { readdirSync, readFileSync } from 'node:fs'
import { createClient, type ClientOptions, type RunResult } from '@dsh/sdk'
import type { DriverInput, DriverResult } from './scenarios.js'

/**
 * Whether a process whose command line is exactly `needle` (argv joined by spaces) runs
 * (Linux /proc): the command itself, not the `bash -c` that will start it — a cancel sent
 * when only the shell exists would race the command's first line.
 */
export function running(needle: string): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0+$/, '').replace(/\0/g, ' ') === needle) return true
    } catch {
      // it ended while we looked
    }
  }
  return false
}

async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  for (let waited = 0; !check(); waited += 25) {
    if (waited > ms) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

export async function runTs(input: DriverInput, options: ClientOptions): Promise<DriverResult> {
  const { plan, workspace } = input
  const out: DriverResult = { texts: [], reasons: [], seen: {}, sessionIds: [] }
  const record = (r: RunResult) => {
    out.texts.push(r.text)
    out.reasons.push(r.reason)
  }
  await using client = await createClient(options)
  switch (plan.kind) {
    case 'run': {
      let approvals = 0
      const questions: string[][] = []
      const toolCalls: unknown[] = []
      const session = await client.createSession({
        workspace,
        ...(plan.tool ? {
          tools: [{
            name: 'lookup', description: 'Looks a key up.', inputSchema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
            execute: (args: { key: string }) => {
              toolCalls.push(args)
              if (args.key !== 'colour') throw new Error(`no such key: ${args.key}`)
              return `value of ${args.key}: blue`
            },
          }],
        } : {}),
      })
      out.sessionIds.push(session.id)
      for (const prompt of plan.prompts) {
        record(await session.run(prompt, {
          onApproval: () => {
            approvals++
            return plan.approve ?? 'reject'
          },
          onQuestion: (request) => {
            questions.push(request.questions.map((q) => q.question))
            return request.questions.map((q) => ({ id: q.id, selected: [q.options[0]!.id] }))
          },
        }))
      }
      if (plan.approve) out.seen.approvals = approvals
      if (plan.tool) out.seen.toolCalls = toolCalls
      if (plan.question) out.seen.questions = questions
      break
    }
    case 'cancel': {
      const session = await client.createSession({ workspace })
      out.sessionIds.push(session.id)
      const turn = session.run(plan.prompt)
      await until(() => running(plan.marker), `${plan.marker} to run`)
      await session.cancel()
      record(await turn)
      let killed = true
      await until(() => !running(plan.marker), `${plan.marker} to end`, 10_000).catch(() => { killed = false })
      out.seen.killed = killed
      break
    }
    case 'two-sessions': {
      const sessions = await Promise.all(plan.prompts.map(() => client.createSession({ workspace })))
      out.sessionIds.push(...sessions.map((s) => s.id))
      const results = await Promise.all(sessions.map((s, i) => s.run(plan.prompts[i]!)))
      results.forEach(record)
      break
    }
    case 'resume': {
      const first = await client.createSession({ workspace })
      out.sessionIds.push(first.id)
      record(await first.run(plan.prompts[0]))
      await client.close()
      await using again = await createClient(options)
      const resumed = await again.openSession(first.id)
      record(await resumed.run(plan.prompts[1]))
      break
    }
  }
  return out
}
