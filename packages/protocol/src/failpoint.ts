/**
 * Test-only crash points. `DSH_FAILPOINT=name:count` makes the `count`-th call of
 * `failpoint(name)` in this process end it with SIGKILL, as `kill -9` would at that exact
 * point (no cleanup, no flush). Unset (the normal case) a call is one map lookup. Names are
 * listed in FAILPOINTS so a test can iterate them; an unknown name in the variable is ignored.
 */
export const FAILPOINTS = [
  'session.append.buffered', // core: an event is in the sink's buffer, listeners not told
  'session.append.notified', // core: listeners (surfaces) were told of the event
  'sink.flush.start', // persistence: a batch is about to be written
  'sink.flush.written', // persistence: the batch is written, not yet fsynced
  'sink.flush.synced', // persistence: the batch is fsynced
  'agent.step.started', // core: step/start appended
  'agent.request.sent', // core: the model request is about to stream
  'agent.message.logged', // core: assistant/message appended, tools not run
  'agent.step.ended', // core: step/end appended, not yet flushed
  'agent.step.flushed', // core: the step is durable
  'tools.calls.flushed', // core: tool/call events durable, tools not started
  'tools.result.logged', // core: a tool/result appended
  'bash.finished', // tools: a bash command exited, its result not yet logged
  'write.finished', // tools: a file write completed, its result not yet logged
  'headless.event.shown', // headless: an event line was handed to stdout
] as const

export type FailpointName = (typeof FAILPOINTS)[number]

let armed: { name: string; count: number } | null | undefined
let hits = 0

export function failpoint(name: FailpointName): void {
  if (armed === undefined) {
    const match = /^([\w.-]+):(\d+)$/.exec(process.env['DSH_FAILPOINT'] ?? '')
    armed = match ? { name: match[1]!, count: Number(match[2]) } : null
  }
  if (armed === null || armed.name !== name) return
  if (++hits === armed.count) process.kill(process.pid, 'SIGKILL')
}
