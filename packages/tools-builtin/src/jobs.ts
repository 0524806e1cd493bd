import { defineTool } from '@dsh/core'
import { renderResult, type JobOutput } from '@dsh/exec'
import { textOf, type ToolResult } from '@dsh/protocol'
import { z } from 'zod'
import { fence, plural } from './text.js'

export const JobParams = z.object({
  jobId: z.string().min(1).describe('The id bash returned when it started the background job (e.g. "job-1").'),
})

/** A job read: header, the new output, what was dropped, and the exit markers once it ended. */
export function renderJob(job: JobOutput, verb: 'output' | 'kill'): string {
  const state = job.running ? 'running' : job.error !== undefined ? `failed to start: ${job.error}` : 'finished'
  const lines = [`Job ${job.id} (${verb === 'kill' && job.error === undefined ? 'stopped' : state}): ${job.command}`]
  if (job.droppedBytes > 0) {
    lines.push(`[${plural(job.droppedBytes, 'earlier byte')} of new output not shown${job.spillPath ? `; full output: ${job.spillPath}` : ''}]`)
  }
  const body = job.running
    ? (job.output || '(no new output)')
    : renderResult({ output: job.output, exitCode: job.exitCode, signal: job.signal, ...(job.sandboxDenied ? { sandboxDenial: `the sandbox refused a write. If it is needed, run the command again with bash escalate: true and a justification; the user will be asked.` } : {}) })
  lines.push(body)
  return lines.join('\n')
}

/** Both job tools show their result as console text. */
function presentJobResult(_args: unknown, result: ToolResult) {
  return { card: 'generic' as const, text: fence(textOf(result.content), 'console'), ...(result.isError ? { isError: true } : {}) }
}

export const jobOutputTool = defineTool({
  name: 'job_output',
  kind: 'execute',
  description: 'Read the new output of a background job started by bash (only what arrived since the last read) and whether it is still running.',
  parameters: JobParams,
  concurrencySafe: true,
  async execute(args, call): Promise<JobOutput> {
    return call.ctx.shell.output(args.jobId, call.sessionId)
  },
  output: { render: (job) => renderJob(job, 'output') },
  presentCall: (args) => ({ card: 'generic', title: `Output of ${args.jobId}`, kind: 'execute' }),
  presentResult: presentJobResult,
})

export const jobKillTool = defineTool({
  name: 'job_kill',
  kind: 'execute',
  description: 'Stop a background job started by bash (SIGTERM, then SIGKILL to its whole process group) and return its last output.',
  parameters: JobParams,
  async execute(args, call): Promise<JobOutput> {
    return call.ctx.shell.kill(args.jobId, call.sessionId)
  },
  output: { render: (job) => renderJob(job, 'kill') },
  presentCall: (args) => ({ card: 'generic', title: `Stop ${args.jobId}`, kind: 'execute' }),
  presentResult: presentJobResult,
})
