import { defineTool, ToolError, type ToolCallContext } from '@dsh/core'
import { cardOutput, parseExitStatus, renderResult, writableRootsOf, type ShellStatus } from '@dsh/exec'
import { failpoint, textOf, type ExecPolicy, type Json } from '@dsh/protocol'
import { z } from 'zod'
import { fence } from './text.js'

export const DEFAULT_TIMEOUT_MS = 120_000
export const MAX_TIMEOUT_MS = 600_000
/** Live output forwarded to surfaces per call (characters); past it one note, then nothing until the result. */
export const LIVE_OUTPUT_CAP = 1_000_000
export const LIVE_OUTPUT_NOTE = '\n[live output stopped here; the result shows the tail]\n'

export const BashParams = z.object({
  command: z.string().min(1).describe('The command line, run by a fresh non-interactive `bash -c` (no shell state carries over between calls).'),
  description: z.string().optional().describe('A short summary of what the command does, for the user (5-10 words).'),
  timeoutMs: z.number().int().positive().max(MAX_TIMEOUT_MS).optional().describe(`Milliseconds before the command is killed (default ${DEFAULT_TIMEOUT_MS}, max ${MAX_TIMEOUT_MS}). Ignored for background jobs.`),
  workdir: z.string().optional().describe('Directory to run in, relative to the workspace (default: the workspace).'),
  run_in_background: z.boolean().optional().describe('Start as a background job and return its id at once; read its output with job_output, stop it with job_kill.'),
  escalate: z.boolean().optional().describe('Run outside the sandbox. Only after the sandbox denied a write that the task needs, and only with a justification: the user is asked.'),
  network: z.boolean().optional().describe('Run in the sandbox but with network access (sandboxed commands have none by default), only when the task needs it and with a justification: the user is asked.'),
  justification: z.string().optional().describe('With escalate or network: why this command needs it (shown to the user).'),
})
export type BashArgs = z.output<typeof BashParams>

export type BashValue =
  | { type: 'run'; status: ShellStatus }
  | { type: 'background'; jobId: string; command: string; cwd: string; pid?: number }

const SHELL_META = /[;&|`$()<>\n\\'"*?]/

/**
 * The allow-always scope of an escalation: the first word, plus the second when it is a
 * plain subcommand (`git status`, `npm install`). A command with shell syntax
 * (pipes, lists, substitutions, quotes, globs) is scoped to itself exactly.
 */
export function commandPrefix(command: string): { key: string; label: string } {
  const trimmed = command.trim()
  if (SHELL_META.test(trimmed)) return { key: `bash:${trimmed}`, label: `run exactly \`${trimmed}\` outside the sandbox in this session` }
  const words = trimmed.split(/\s+/).filter((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w))
  const prefix = words.slice(0, words[1] && /^[a-z][a-z0-9-]*$/i.test(words[1]) ? 2 : 1).join(' ')
  return { key: `bash:${prefix}`, label: `run \`${prefix} …\` commands outside the sandbox in this session` }
}

/** The one-line denial marker text; it tells the model what it may do next. */
export function denialMessage(policy: ExecPolicy): string {
  const where = policy.mode === 'read-only' ? 'nothing is writable' : `writable: ${writableRootsOf(policy).join(', ')}`
  return `the ${policy.mode} sandbox refused a write (${where}). If the write is needed, call bash again once with `
    + 'escalate: true and a justification; the user will be asked.'
}

/** The network escalation's allow-always scope: the command prefix, under `net:`. */
export function networkScope(command: string): { key: string; label: string } {
  const { key, label } = commandPrefix(command)
  return { key: `net:${key}`, label: label.replace('outside the sandbox', 'with network access') }
}

async function callPolicy(args: BashArgs, call: ToolCallContext): Promise<ExecPolicy> {
  if (call.policy.mode === 'danger-full-access') return call.policy
  const network = args.network && !call.policy.network && !args.escalate
  if (!args.escalate && !network) return call.policy
  const what = args.escalate ? 'run outside the sandbox' : 'use the network'
  if (!args.justification?.trim()) {
    throw new ToolError(`${args.escalate ? 'escalate' : 'network'}: true needs a justification: say why this command must ${what}.`)
  }
  const outcome = await call.requestApproval({
    kind: 'escalation',
    title: args.command,
    reason: args.justification,
    rawInput: args as unknown as Json,
    card: presentBashCall(args),
    scope: args.escalate ? commandPrefix(args.command) : networkScope(args.command),
  })
  switch (outcome) {
    case 'allow-once': case 'allow-always':
      return args.escalate ? { ...call.policy, mode: 'danger-full-access' } : { ...call.policy, network: true }
    case 'reject':
      if (!call.approvalAvailable) {
        throw new ToolError(`No one can approve a command that would ${what} on this surface (a headless run denies `
          + 'what needs approval). Do not retry it; find a way that stays inside the sandbox, or say in your answer what needs to run.')
      }
      throw new ToolError(`The user did not allow this command to ${what}. Do not retry it; `
        + 'find a way that stays inside the sandbox, or ask the user.')
    case 'cancelled':
      throw new ToolError(`The request to let this command ${what} was cancelled; it did not run.`)
  }
}

async function workdirOf(args: BashArgs, call: ToolCallContext): Promise<string> {
  if (!args.workdir) return call.cwd
  const dir = call.ctx.fs.resolve(call.cwd, args.workdir)
  const st = await call.ctx.fs.stat(dir)
  if (st?.type !== 'directory') throw new ToolError(`workdir ${args.workdir} (${dir}) is not an existing directory.`)
  return dir
}

export function presentBashCall(args: BashArgs) {
  const description = args.description ? { description: args.description } : {}
  if (args.run_in_background) return { card: 'generic' as const, title: args.command, kind: 'execute' as const, ...description }
  return { card: 'terminal' as const, title: args.command, ...description, ...(args.workdir ? { cwd: args.workdir } : {}) }
}

export const bashTool = defineTool({
  name: 'bash',
  kind: 'execute',
  description: [
    'Run a shell command in the workspace with a fresh non-interactive `bash -c` (cwd, variables and aliases do not persist between calls).',
    'Commands run in a sandbox: what the session\'s permission mode does not allow (e.g. writing outside the workspace) fails with "Read-only file system",',
    'and sandboxed commands have no network (not even 127.0.0.1) unless the session allows it: pass network: true with a justification to ask for it.',
    'The result is the output (stdout and stderr interleaved), followed by status lines: `[exit code: N]` for a non-zero exit,',
    '`[killed by signal: SIG]`, `[timed out after Nms]`, `[sandbox denied: …]`, and `[output truncated: …; full output: PATH]` when only the tail is shown.',
    'No pager, no colour, no prompts: pass non-interactive flags. Use run_in_background for servers and watchers.',
    'Prefer the read/edit/grep/glob tools over cat/sed/grep/find for files.',
  ].join(' '),
  parameters: BashParams,
  async execute(args, call): Promise<BashValue> {
    const policy = await callPolicy(args, call)
    const cwd = await workdirOf(args, call)
    if (args.run_in_background) {
      const job = await call.ctx.shell.start(args.command, { policy, cwd, owner: call.sessionId })
      return { type: 'background', jobId: job.id, command: args.command, cwd, ...(job.pid !== undefined ? { pid: job.pid } : {}) }
    }
    let live = 0
    const result = await call.ctx.shell.run(args.command, {
      policy,
      cwd,
      timeoutMs: args.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      signal: call.signal,
      onData: (data) => {
        if (live > LIVE_OUTPUT_CAP) return
        live += data.length
        call.progress({ type: 'output', data: live > LIVE_OUTPUT_CAP ? LIVE_OUTPUT_NOTE : data })
      },
    })
    failpoint('bash.finished')
    const status: ShellStatus = {
      output: result.output,
      exitCode: result.exitCode,
      signal: result.signal,
      ...(result.timedOutMs !== undefined ? { timedOutMs: result.timedOutMs } : {}),
      ...(result.sandboxDenied ? { sandboxDenial: denialMessage(policy) } : {}),
      ...(result.truncation ? { truncation: result.truncation } : {}),
    }
    return { type: 'run', status }
  },
  output: {
    render(value) {
      if (value.type === 'run') return renderResult(value.status)
      return `Started background job ${value.jobId}${value.pid ? ` (pid ${value.pid})` : ''} in ${value.cwd}: ${value.command}\n`
        + `Read its new output with job_output {"jobId": "${value.jobId}"}; stop it with job_kill. It is stopped when the session ends.`
    },
  },
  presentCall: presentBashCall,
  presentResult(args, result) {
    const text = textOf(result.content)
    if (result.isError || args.run_in_background) {
      return { card: 'generic', text: fence(text, 'console'), ...(result.isError ? { isError: true } : {}) }
    }
    const status = parseExitStatus(text)
    const output = cardOutput(status)
    return status.signal ? { card: 'terminal', output, signal: status.signal } : { card: 'terminal', output, exitCode: status.exitCode ?? 0 }
  },
})
