import { z } from 'zod'

const Env = z.record(z.string(), z.string())

/** Keys every server spec has, whatever its transport. */
const Common = {
  /** Skip the permission preset's approval for this server's tools (shown in /status). */
  trusted: z.boolean().default(false),
  /** How long starting may take (ms); defaults to the plugin's `connectTimeoutMs`. */
  connectTimeoutMs: z.number().int().positive().optional(),
}

/** A server started as a child process speaking MCP on stdin/stdout. `type` may be left out. */
export const StdioServerSpec = z.object({
  type: z.literal('stdio').default('stdio'),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Added to a minimal inherited environment (HOME, LOGNAME, PATH, SHELL, TERM, USER): secrets are not passed on unless listed here. */
  env: Env.default({}),
  cwd: z.string().min(1).optional(),
  /** Per-call timeout for this server; defaults to the plugin's `timeoutMs`. */
  timeoutMs: z.number().int().positive().optional(),
  ...Common,
})

/** A server reached over streamable HTTP. */
export const HttpServerSpec = z.object({
  type: z.literal('http'),
  url: z.url({ protocol: /^https?$/ }),
  headers: Env.default({}),
  timeoutMs: z.number().int().positive().optional(),
  ...Common,
})

export const ServerSpec = z.union([StdioServerSpec, HttpServerSpec])
/** A server spec as written (defaults not yet applied). */
export type ServerSpecInput = z.input<typeof ServerSpec>
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
