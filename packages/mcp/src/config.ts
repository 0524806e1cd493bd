import { z } from 'zod'

const Env = z.record(z.string(), z.string())

/** Keys every server spec has, whatever its transport. */
const Common = {
  /** Skip the permission preset's approval for this server's tools (shown in /status). */
  trusted: z.boolean().default(false),
  /** How long starting may take (ms); defaults to the plugin's `connectTimeoutMs`. */
  connectTimeoutMs: z.number().int().positive().optional(),
}

function unknownKey(issue: { code?: string; keys?: string[] }): string | undefined {
  if (issue.code !== 'unrecognized_keys') return undefined
  return `unknown key ${(issue.keys ?? []).map((k) => JSON.stringify(k)).join(', ')} in a server entry (stdio: type, command, args, env, cwd, timeoutMs, trusted, connectTimeoutMs; http: type, url, headers, timeoutMs, trusted, connectTimeoutMs)`
}

/** A server started as a child process speaking MCP on stdin/stdout. `type` may be left out. */
export const StdioServerSpec = z.strictObject({
  type: z.literal('stdio').default('stdio'),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Added to a minimal inherited environment (HOME, LOGNAME, PATH, SHELL, TERM, USER): secrets are not passed on unless listed here. */
  env: Env.default({}),
  cwd: z.string().min(1).optional(),
  /** Per-call timeout for this server; defaults to the plugin's `timeoutMs`. */
  timeoutMs: z.number().int().positive().optional(),
  ...Common,
}, { error: unknownKey })

/** A server reached over streamable HTTP. */
export const HttpServerSpec = z.strictObject({
  type: z.literal('http'),
  url: z.url({ protocol: /^https?$/ }),
  headers: Env.default({}),
  timeoutMs: z.number().int().positive().optional(),
  ...Common,
}, { error: unknownKey })

const Spec = z.discriminatedUnion('type', [StdioServerSpec, HttpServerSpec])
/** An entry without `type` is a stdio server; unknown keys are errors naming the accepted ones. */
export const ServerSpec = z.preprocess((v) => (v && typeof v === 'object' && !Array.isArray(v) && !('type' in v) ? { type: 'stdio', ...v } : v), Spec)
/** A server spec as written (defaults not yet applied). */
export type ServerSpecInput = z.input<typeof Spec>
export type ServerSpec = z.output<typeof ServerSpec>

export const Config = z.object({
  /** Servers mounted for every session when the plugin starts, by name. */
  servers: z.record(z.string().min(1), ServerSpec).default({}),
  /** Per-call timeout (ms). */
  timeoutMs: z.number().int().positive().default(120_000),
  /** How long starting a server (spawn + initialize + first tools/list) may take (ms), per server. */
  connectTimeoutMs: z.number().int().positive().default(10_000),
  /** Grace between closing a stdio server's stdin, SIGTERM and SIGKILL (ms). */
  killGraceMs: z.number().int().min(0).default(2_000),
  /** Characters of a stdio server's stderr kept for failure messages. */
  stderrLimit: z.number().int().min(0).default(4_000),
}).prefault({})
export type Config = z.output<typeof Config>
