// Bench: per-request cost of the Anthropic Messages request body as UTF-8 bytes, uncached
// (`JSON.stringify(buildMessagesRequest(req))`, what the adapter sent before decision 0090),
// cached (`serializeMessagesRequest(req)`, 0090) and from the arena (`encodeMessagesRequest`,
// 0097), at several history lengths. Each sample is one
// request whose last step (assistant + tool result) is new, so it is serialised fresh, and
// whose earlier messages were seen by the previous request — as in a tool loop.
// Run after `npm run build`: `node packages/llm-anthropic/bench/body.mjs [rounds] [perRound]`.
// Prints a table (ms per request: median of the rounds' means, min–max) and one JSON line.
import { buildMessagesRequest, encodeMessagesRequest, serializeMessagesRequest } from '@dsh/llm-anthropic'

const rounds = Number(process.argv[2] ?? 7)
const perRound = Number(process.argv[3] ?? 20)
const STEPS = (process.env.BENCH_STEPS ?? "5,50,500,1000").split(",").map(Number)

function freezeDeep(value) {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) freezeDeep(v)
  }
  return value
}

let serial = 0
/** One tool step as the session deriver hands it out: a signed thinking block, text, a bash call, its result. */
function step() {
  const id = `toolu_${++serial}`
  return [
    freezeDeep({ role: 'assistant', content: [
      { type: 'reasoning', text: 'I should list the directory to see what is there. '.repeat(3), signature: 'EqQBCkYIBxgCKkD'.repeat(12) },
      { type: 'text', text: 'Let me look at the directory first.' },
      { type: 'tool-call', id, name: 'bash', arguments: JSON.stringify({ command: `ls -la src/part${serial}`, description: 'list the sources' }) },
    ] }),
    freezeDeep({ role: 'tool', callId: id, name: 'bash', content: [{ type: 'text', text: 'drwxr-xr-x  2 user user 4096 Nov 29 18:59 src/\n'.repeat(4) }], isError: false }),
  ]
}

const tools = Array.from({ length: 12 }, (_, i) => ({
  name: `tool_${i}`, description: 'A built-in tool that does one thing well. '.repeat(4),
  parameters: { type: 'object', properties: { path: { type: 'string', description: 'a path' }, limit: { type: 'integer' } }, required: ['path'] },
}))
const system = 'You are dsh, a coding agent. Follow the project rules. '.repeat(110) // ~6 KB
const signal = new AbortController().signal

function measure(steps, serialize) {
  const history = [freezeDeep({ role: 'user', content: [{ type: 'text', text: 'Please fix the failing tests in src.' }] })]
  for (let i = 1; i < steps; i++) history.push(...step())
  const request = () => ({ config: { provider: 'anthropic', model: 'claude-sonnet-4-5', reasoningEffort: 'low' }, system, tools, messages: [...history, ...step()], signal })
  const sample = request()
  serialize(sample) // warm: the earlier messages were seen by the previous request
  const bytes = serialize(sample).reduce((n, c) => n + c.byteLength, 0)
  const means = []
  for (let r = 0; r < rounds; r++) {
    const reqs = Array.from({ length: perRound }, request)
    const t0 = process.hrtime.bigint()
    for (const req of reqs) serialize(req)
    means.push(Number(process.hrtime.bigint() - t0) / 1e6 / perRound)
  }
  means.sort((a, b) => a - b)
  return { messages: sample.messages.length, bytes, median: means[Math.floor(means.length / 2)], min: means[0], max: means[means.length - 1] }
}

// each as the bytes handed to the socket: the two text builds include their UTF-8 encoding
const uncached = (req) => [Buffer.from(JSON.stringify(buildMessagesRequest(req)), 'utf8')]
const cached = (req) => [Buffer.from(serializeMessagesRequest(req), 'utf8')]
const rows = []
for (const steps of STEPS) {
  const before = measure(steps, uncached)
  const after = measure(steps, cached)
  const arena = measure(steps, encodeMessagesRequest)
  rows.push({ steps, messages: after.messages, kb: Math.round(after.bytes / 1024), before, after, arena })
}
const f = (x) => x.toFixed(3)
console.log('steps  messages  body KB  uncached ms (min–max)      cached ms (min–max)       arena ms (min–max)')
for (const r of rows) {
  console.log(`${String(r.steps).padStart(5)}  ${String(r.messages).padStart(8)}  ${String(r.kb).padStart(7)}  ${f(r.before.median)} (${f(r.before.min)}–${f(r.before.max)})`.padEnd(54) + `${f(r.after.median)} (${f(r.after.min)}–${f(r.after.max)})`.padEnd(26) + `${f(r.arena.median)} (${f(r.arena.min)}–${f(r.arena.max)})`)
}
console.log(JSON.stringify({ rounds, perRound, rows: rows.map((r) => ({ steps: r.steps, messages: r.messages, bytes: r.after.bytes, uncachedMs: r.before.median, cachedMs: r.after.median, arenaMs: r.arena.median })) }))
