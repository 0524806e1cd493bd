import type { ToolDefinition } from '@dsh/core'
import type { ShellStatus } from '@dsh/exec'
import type { ResultCard } from '@dsh/protocol'
import { describe, expect, it } from 'vitest'
import { bashTool, type BashValue } from '../src/bash.js'

const tool = bashTool as unknown as ToolDefinition<typeof bashTool.parameters, BashValue>
const args = bashTool.parameters.parse({ command: 'make' })

function roundTrip(status: ShellStatus): ResultCard {
  const rendered = tool.output.render({ type: 'run', status }, args)
  const text = typeof rendered === 'string' ? rendered : ''
  return tool.presentResult!(args, { content: [{ type: 'text', text }], isError: false })
}

const base: ShellStatus = { output: 'out\n', exitCode: 0, signal: null }
const spill = { spillPath: '/tmp/t/dsh-bash-1.log', totalBytes: 99999, totalLines: 5000, shownLines: 1 }
const denial = 'the workspace-write sandbox refused a write (writable: /w). Retry with escalate: true.'

// [label, status, the card expected back]: the exit status comes back as exitCode/signal,
// its marker is gone from the card output; informational markers stay for the user.
const cases: [string, ShellStatus, ResultCard][] = [
  ['exit 0', base, { card: 'terminal', output: 'out', exitCode: 0 }],
  ['exit code', { ...base, exitCode: 2 }, { card: 'terminal', output: 'out', exitCode: 2 }],
  ['signal', { ...base, exitCode: null, signal: 'SIGKILL' }, { card: 'terminal', output: 'out', signal: 'SIGKILL' }],
  ['timeout', { ...base, exitCode: null, signal: 'SIGTERM', timedOutMs: 1000 },
    { card: 'terminal', output: 'out\n[timed out after 1000ms]', signal: 'SIGTERM' }],
  ['sandbox denial', { ...base, exitCode: 1, sandboxDenial: denial }, { card: 'terminal', output: `out\n[sandbox denied: ${denial}]`, exitCode: 1 }],
  ['truncation', { ...base, exitCode: 3, truncation: spill },
    { card: 'terminal', output: 'out\n[output truncated: showing the last 1 of 5000 lines (99999 bytes); full output: /tmp/t/dsh-bash-1.log]', exitCode: 3 }],
  ['output that looks like an exit marker', { ...base, output: 'x\n[exit code: 9]\n' }, { card: 'terminal', output: 'x\n[exit code: 9]', exitCode: 0 }],
  ['output that looks like a signal marker, real exit', { ...base, output: '[killed by signal: SIGHUP]', exitCode: 4 },
    { card: 'terminal', output: '[killed by signal: SIGHUP]', exitCode: 4 }],
  ['marker text mid-line', { ...base, output: 'echo [exit code: 5]' }, { card: 'terminal', output: 'echo [exit code: 5]', exitCode: 0 }],
  ['empty output, exit code', { output: '', exitCode: 1, signal: null }, { card: 'terminal', output: '', exitCode: 1 }],
  ['empty output, clean', { output: '', exitCode: 0, signal: null }, { card: 'terminal', output: '', exitCode: 0 }],
]

describe('bash result round trip (render → presentResult)', () => {
  it.each(cases)('%s', (_label, status, card) => {
    expect(roundTrip(status)).toEqual(card)
  })
})
