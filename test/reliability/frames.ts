import fc from 'fast-check'

/** One generated input line and, when it is a well-formed request, the id that must get exactly one answer. */
export interface Frame { line: string; id?: string | number }

const METHODS = [
  'initialize', 'authenticate', 'logout', 'session/new', 'session/load', 'session/resume', 'session/list',
  'session/close', 'session/fork', 'session/set_mode', 'session/set_config_option', 'session/prompt',
  'session/cancel', '_dsh/unknown', 'nosuch/method', '',
]

const anyJson = fc.jsonValue({ maxDepth: 3 })
const oddId = fc.oneof(fc.constant(null), fc.boolean(), fc.double(), fc.array(fc.integer(), { maxLength: 2 }), fc.object({ maxDepth: 1 }))
const params = fc.oneof(
  anyJson,
  fc.record({ cwd: fc.oneof(fc.string(), fc.constant('/'), fc.constant('relative')), mcpServers: fc.oneof(fc.constant([]), anyJson) }, { requiredKeys: [] }),
  fc.record({ sessionId: fc.string({ maxLength: 40 }), prompt: anyJson }, { requiredKeys: [] }),
  fc.record({ protocolVersion: fc.oneof(fc.integer(), fc.string()), clientCapabilities: anyJson }, { requiredKeys: [] }),
)

/** The kinds of hostile input: broken JSON, wrong shapes, odd ids, unknown methods, huge strings, batches, stray responses. */
export function frameArbitrary(options: { huge?: boolean } = {}): fc.Arbitrary<Omit<Frame, 'id'> & { request?: true }> {
  const line = (value: unknown) => JSON.stringify(value)
  const request = fc.record({ method: fc.constantFrom(...METHODS), params }).map((r) => ({ line: '', request: true as const, ...r }))
  const kinds = [
    request,
    request,
    request,
    fc.string({ maxLength: 200 }).map((s) => ({ line: s.replace(/\n/g, ' ') })),
    fc.string({ maxLength: 200 }).map((s) => ({ line: `{"jsonrpc":"2.0","id":1,"method":"initialize"${s.replace(/\n/g, '')}` })),
    anyJson.map((v) => ({ line: line(v) })),
    fc.record({ jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('1.0'), anyJson), id: oddId, method: fc.oneof(fc.constantFrom(...METHODS), anyJson), params: anyJson }, { requiredKeys: ['id'] }).map((v) => ({ line: line(v) })),
    fc.record({ jsonrpc: fc.constant('2.0'), method: fc.constantFrom(...METHODS), params }).map((v) => ({ line: line(v) })),
    fc.record({ jsonrpc: fc.constant('2.0'), id: fc.integer(), result: anyJson }).map((v) => ({ line: line(v) })),
    fc.array(fc.record({ jsonrpc: fc.constant('2.0'), id: fc.integer(), method: fc.constantFrom(...METHODS) }), { maxLength: 4 }).map((v) => ({ line: line(v) })),
    fc.uint8Array({ maxLength: 120 }).map((b) => ({ line: Buffer.from(b).toString('latin1').replace(/\n/g, '') })),
  ]
  const weighted: { arbitrary: fc.Arbitrary<{ line: string; request?: true }>; weight: number }[] = kinds.map((arbitrary) => ({ arbitrary, weight: 10 }))
  // about 1 frame in 100: a request carrying 256 KiB-4 MiB (a huge cwd, as an attacker would send)
  if (options.huge) weighted.push({ weight: 1, arbitrary: fc.integer({ min: 256 * 1024, max: 4 * 1024 * 1024 }).map((n) => ({ line: line({ jsonrpc: '2.0', id: 'huge', method: 'session/new', params: { cwd: 'x'.repeat(n), mcpServers: [] } }), request: true as const })) })
  return fc.oneof(...weighted)
}

/**
 * `count` frames from `seed`; requests get unique ids (`r<n>` or n), so answers can be counted.
 * A request frame is written with the generated method and params.
 */
export function generateFrames(seed: number, count: number, options: { huge?: boolean } = {}): Frame[] {
  const drawn = fc.sample(frameArbitrary(options), { seed, numRuns: count })
  return drawn.map((f, n) => {
    if (!('request' in f)) return { line: f.line }
    const id = n % 2 ? `r${n}` : 1_000_000 + n
    if (f.line.startsWith('{"jsonrpc":"2.0","id":"huge"')) return { line: f.line.replace('"id":"huge"', `"id":${JSON.stringify(id)}`), id }
    const r = f as unknown as { method: string; params: unknown }
    return { line: JSON.stringify({ jsonrpc: '2.0', id, method: r.method, params: r.params }), id }
  })
}

/** Answers (responses with `result` or `error`) per id in what a carrier sent back. */
export function answersById(frames: readonly unknown[]): Map<string | number, number> {
  const out = new Map<string | number, number>()
  for (const f of frames) {
    if (typeof f !== 'object' || f === null || Array.isArray(f)) continue
    const frame = f as Record<string, unknown>
    if (!('result' in frame) && !('error' in frame)) continue
    if (typeof frame.id !== 'string' && typeof frame.id !== 'number') continue
    out.set(frame.id, (out.get(frame.id) ?? 0) + 1)
  }
  return out
}

/** Ids whose answer count is not exactly one. */
export function answerMismatches(frames: readonly Frame[], answers: Map<string | number, number>): string[] {
  const out: string[] = []
  for (const f of frames) if (f.id !== undefined && answers.get(f.id) !== 1) out.push(`${JSON.stringify(f.id)}: ${answers.get(f.id) ?? 0} answers to ${f.line.slice(0, 80)}`)
  return out
}
