import { z } from 'zod'

/**
 * Building blocks of the method table. Browser-safe: zod only (no Node imports), so the
 * web UI, the SDK clients and the server validate against the same definitions.
 * Events and cards are described loosely here (their exact vocabulary lives in
 * @dsh/protocol and grows with plugins); the table fixes the envelope.
 */

export const SessionId = z.string().min(1).max(200).describe('a session id')
export const AbsolutePath = z.string().min(1).max(4096)
  .refine((p) => p.startsWith('/'), { message: 'must be an absolute path' })
  .describe('an absolute path on the host')

export const JsonValue: z.ZodType<unknown> = z.unknown()

export const TextPart = z.object({ type: z.literal('text'), text: z.string() })
export const ImagePart = z.object({ type: z.literal('image'), mimeType: z.string().min(1), data: z.string().describe('base64') })
export const UserContent = z.discriminatedUnion('type', [TextPart, ImagePart])
/** A prompt: plain text, or content parts. */
export const PromptInput = z.union([z.string().min(1), z.array(UserContent).min(1)])

/** One logged session event, as stored (`seq` is the cursor everywhere). */
export const SessionEvent = z.object({
  type: z.string().min(1),
  seq: z.number().int().nonnegative(),
  time: z.number(),
  data: JsonValue,
  ignorable: z.literal(true).optional(),
})

/** The presenter card of a tool call or result (see @dsh/protocol CallCard / ResultCard). */
export const Card = z.looseObject({ card: z.enum(['generic', 'terminal', 'diff', 'read', 'search', 'web']) })

/**
 * The surface-neutral view of an event: for `tool/call` and `tool/result`, the card from the
 * tool's own pure presenter; null for every other event. Computed, never persisted: a
 * replayed log gives exactly the views the live stream gave.
 */
export const EventView = z.union([
  z.object({ kind: z.literal('tool-call'), callId: z.string(), tool: z.string(), card: Card }),
  z.object({ kind: z.literal('tool-result'), callId: z.string(), tool: z.string(), card: Card, isError: z.boolean() }),
  z.null(),
])

export const ViewedEvent = z.object({ event: SessionEvent, view: EventView })

/** idle: nothing runs; running: a turn or command runs; waiting: a turn waits for an answer (approval, question, client tool). */
export const SessionStatus = z.enum(['idle', 'running', 'waiting'])

export const PermissionMode = z.string().min(1).describe('a permission preset id (read-only, workspace-write, danger-full-access, or a plugin\'s)')
export const ReasoningEffort = z.enum(['off', 'low', 'medium', 'high', 'max'])

/** An MCP server for one session (stdio or streamable HTTP). */
export const McpServerSpec = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('stdio'), command: z.string().min(1), args: z.array(z.string()).optional(), env: z.record(z.string(), z.string()).optional(), trusted: z.boolean().optional() }),
  z.strictObject({ type: z.literal('http'), url: z.string().url(), headers: z.record(z.string(), z.string()).optional(), trusted: z.boolean().optional() }),
])

/** A tool the owning client executes (`tool/call` server→client request). */
export const ClientToolSpec = z.strictObject({
  name: z.string().regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/, 'letters, digits, _ and -, starting with a letter, at most 64'),
  description: z.string().min(1).max(4000),
  inputSchema: z.record(z.string(), JsonValue).describe('a JSON Schema object (type: object)'),
})

/** Where tools run: the local machine (default) or a remote world. */
export const WorldSpec = z.strictObject({
  url: z.string().min(1).describe('ssh://USER@HOST[:PORT]/ABS/ROOT'),
  identity: z.string().optional(),
  knownHosts: z.string().optional(),
})

/** What a list shows of a session. */
export const SessionSummary = z.object({
  id: SessionId,
  workspace: z.string(),
  title: z.string().nullable(),
  created: z.number(),
  updatedAt: z.number(),
  events: z.number().int().nonnegative(),
  status: SessionStatus,
  archived: z.boolean(),
  parent: z.object({ id: z.string(), callId: z.string().optional(), fork: z.boolean().optional() }).nullable(),
  /** Whether this process holds the session open (and which surface owns it). */
  open: z.boolean(),
})

/** The session's current settings, as a surface shows them. */
export const SessionConfig = z.object({
  provider: z.string(),
  model: z.string(),
  reasoningEffort: ReasoningEffort.nullable(),
  permissionMode: z.string(),
  agentPreset: z.string().nullable(),
})

export const SessionDetail = SessionSummary.extend({
  config: SessionConfig,
  /** The seq of the last durable event (-1 for an empty log): `session/subscribe {afterSeq: lastSeq}` continues from here. */
  lastSeq: z.number().int().min(-1),
})

export const ApprovalDecision = z.enum(['allow-once', 'allow-session', 'reject'])

export const Usage = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  reasoningTokens: z.number().optional(),
  cacheReadTokens: z.number().optional(),
  cacheWriteTokens: z.number().optional(),
})
