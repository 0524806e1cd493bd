// The ONE table of scenarios that drives both SDK clients (TypeScript in-process, Python as
// a subprocess) against the built `dsh sdk` and the scripted mock model. Each scenario is
// plain data: the model's script, what the driver does, and what must come out (texts,
// turn/end reasons, and the files on disk afterwards — checked by the test, not the driver).
import type { Step } from '@dsh/testkit'

export type Plan =
  | { kind: 'run'; prompts: string[]; approve?: 'allow-once' | 'reject'; question?: true; tool?: true }
  | { kind: 'cancel'; prompt: string; marker: string }
  | { kind: 'two-sessions'; prompts: [string, string] }
  | { kind: 'resume'; prompts: [string, string] }

export interface Scenario {
  name: string
  script: Step[]
  plan: Plan
  expect: {
    texts: string[]
    reasons: string[]
    /** Relative to the workspace: the content, or null for "must not exist". */
    files?: Record<string, string | null>
    /** What the driver saw besides texts and reasons (approval titles, tool arguments, question ids). */
    seen?: Record<string, unknown>
  }
}

const bash = (command: string, extra: Record<string, unknown> = {}) => ({ name: 'bash', arguments: { command, ...extra } })
const SLEEP_MARKER = '417.31'

export const SCENARIOS: Scenario[] = [
  {
    name: 'one-shot with tool calls',
    script: [
      { toolCalls: [bash('printf one > a.txt')] },
      { toolCalls: [bash('cat a.txt; printf two > b.txt')] },
      { text: 'Wrote a.txt and b.txt.', expect: { lastToolResultIncludes: 'one' } },
    ],
    plan: { kind: 'run', prompts: ['write two files'] },
    expect: { texts: ['Wrote a.txt and b.txt.'], reasons: ['completed'], files: { 'a.txt': 'one', 'b.txt': 'two' } },
  },
  {
    name: 'approval answered allow',
    script: [
      { toolCalls: [bash('printf yes > approved.txt', { escalate: true, justification: 'the test asks for it' })] },
      { text: 'Done.' },
    ],
    plan: { kind: 'run', prompts: ['escalate please'], approve: 'allow-once' },
    expect: { texts: ['Done.'], reasons: ['completed'], files: { 'approved.txt': 'yes' }, seen: { approvals: 1 } },
  },
  {
    name: 'approval answered reject',
    script: [
      { toolCalls: [bash('printf yes > approved.txt', { escalate: true, justification: 'the test asks for it' })] },
      { text: 'Done.', expect: { lastToolResultIncludes: 'did not allow' } },
    ],
    plan: { kind: 'run', prompts: ['escalate please'], approve: 'reject' },
    expect: { texts: ['Done.'], reasons: ['completed'], files: { 'approved.txt': null }, seen: { approvals: 1 } },
  },
  {
    name: 'cancel kills a running command',
    script: [
      { toolCalls: [bash(`printf started > started.txt; sleep ${SLEEP_MARKER}; printf late > late.txt`)] },
    ],
    plan: { kind: 'cancel', prompt: 'sleep a while', marker: `sleep ${SLEEP_MARKER}` },
    expect: { texts: [''], reasons: ['aborted'], files: { 'started.txt': 'started', 'late.txt': null }, seen: { killed: true } },
  },
  {
    name: 'a question answered by the callback',
    script: [
      { toolCalls: [{ name: 'question', arguments: { questions: [{ question: 'Which colour?', options: [{ label: 'Blue' }, { label: 'Red' }] }] } }], expect: { toolsInclude: ['question'] } },
      { text: 'Blue it is.', expect: { lastToolResultIncludes: 'Which colour?\n→ Blue' } },
    ],
    plan: { kind: 'run', prompts: ['ask me'], question: true },
    expect: { texts: ['Blue it is.'], reasons: ['completed'], seen: { questions: [['Which colour?']] } },
  },
  {
    name: 'a client-defined tool',
    script: [
      { toolCalls: [{ name: 'lookup', arguments: { key: 'colour' } }], expect: { toolsInclude: ['lookup'] } },
      { toolCalls: [{ name: 'lookup', arguments: { key: 'boom' } }], expect: { lastToolResultIncludes: 'value of colour' } },
      { text: 'The colour is known.', expect: { lastToolResultIncludes: 'no such key: boom' } },
    ],
    plan: { kind: 'run', prompts: ['look it up'], tool: true },
    expect: { texts: ['The colour is known.'], reasons: ['completed'], seen: { toolCalls: [{ key: 'colour' }, { key: 'boom' }] } },
  },
  {
    name: 'two sessions at once',
    script: [{ text: 'ok', delayMs: 20 }, { text: 'ok', delayMs: 20 }],
    plan: { kind: 'two-sessions', prompts: ['first session', 'second session'] },
    expect: { texts: ['ok', 'ok'], reasons: ['completed', 'completed'] },
  },
  {
    name: 'a resumed session',
    script: [
      { text: 'one', expect: { lastUserTextIncludes: 'remember this' } },
      { text: 'two', expect: { lastUserTextIncludes: 'what did I say' } },
    ],
    plan: { kind: 'resume', prompts: ['remember this', 'what did I say'] },
    expect: { texts: ['one', 'two'], reasons: ['completed', 'completed'] },
  },
]

/** What a driver prints (one JSON line) for the test to compare. */
export interface DriverResult {
  texts: string[]
  reasons: string[]
  seen: Record<string, unknown>
  sessionIds: string[]
}

export interface DriverInput {
  plan: Plan
  workspace: string
}
