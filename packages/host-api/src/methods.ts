import { z } from 'zod'
import {
  AbsolutePath, ApprovalDecision, ClientToolSpec, EventView, JsonValue, McpServerSpec, PermissionMode, PromptInput, ReasoningEffort,
  SessionConfig, SessionDetail, SessionEvent, SessionId, SessionStatus, SessionSummary, Usage, ViewedEvent, WorldSpec,
} from './shapes.js'

/** The carriers that serve the table. ACP speaks its own protocol and calls `ctx.host` directly. */
export type Carrier = 'sdk' | 'web'
const BOTH: readonly Carrier[] = ['sdk', 'web']

export interface MethodDef<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  params: P
  result: R
  /** Which carriers expose the method. */
  carriers: readonly Carrier[]
  description: string
}

const def = <P extends z.ZodType, R extends z.ZodType>(description: string, params: P, result: R, carriers: readonly Carrier[] = BOTH): MethodDef<P, R> =>
  ({ params, result, carriers, description })

/**
 * A table whose entries are built on first access, then kept: building every method's zod
 * schemas at module load cost start-up for a table of which a run dispatches a few methods
 * (0095). Keys are own, enumerable properties (`Object.hasOwn`, `Object.entries` as before).
 */
function lazyTable<T extends Record<string, () => MethodDef>>(thunks: T): { readonly [K in keyof T]: ReturnType<T[K]> } {
  const table = {} as { [K in keyof T]: ReturnType<T[K]> }
  for (const key of Object.keys(thunks) as (keyof T & string)[]) {
    Object.defineProperty(table, key, {
      enumerable: true, configurable: true,
      get() {
        const value = thunks[key]!() as ReturnType<T[typeof key]>
        Object.defineProperty(table, key, { value, enumerable: true, writable: false, configurable: false })
        return value
      },
    })
  }
  return table
}

const Empty = z.strictObject({})
const Ok = z.object({})
const OfSession = z.strictObject({ sessionId: SessionId })

export const PROTOCOL_VERSION = 1

/**
 * Client → server methods. One definition per method: `params` are validated at the
 * boundary (invalid params name the field), `result` is what the server answers.
 */
export const METHODS = lazyTable({
  'initialize': () => def('Opens the connection: the client says what it can answer.',
    z.strictObject({
      protocolVersion: z.literal(PROTOCOL_VERSION),
      client: z.strictObject({ name: z.string().min(1).max(200), version: z.string().max(100) }),
      capabilities: z.strictObject({
        /** The client answers `approval/request` (else approvals are denied with a reason, as in headless). */
        approvals: z.boolean().optional(),
        /** The client answers `question/request` (else the `question` tool is not offered). */
        questions: z.boolean().optional(),
        /** The client executes client-defined tools (`tool/call`). */
        tools: z.boolean().optional(),
      }).optional(),
    }),
    z.object({
      protocolVersion: z.literal(PROTOCOL_VERSION),
      server: z.object({ name: z.string(), version: z.string() }),
      capabilities: z.object({ approvals: z.boolean(), questions: z.boolean(), tools: z.boolean(), mcp: z.boolean(), worlds: z.array(z.string()) }),
    })),
  'host/describe': () => def('Version, providers and their models, permission and agent presets, and the defaults a new session gets.', Empty,
    z.object({
      version: z.string(),
      providers: z.array(z.object({ id: z.string(), configured: z.boolean(), models: z.array(z.string()) })),
      permissionModes: z.array(z.object({ id: z.string(), description: z.string() })),
      agentPresets: z.array(z.object({ id: z.string(), description: z.string() })),
      defaults: z.object({ provider: z.string(), model: z.string(), reasoningEffort: ReasoningEffort.nullable(), permissionMode: z.string(), agentPreset: z.string().nullable() }),
    })),
  'models/list': () => def('Every known model, optionally of one provider.', z.strictObject({ provider: z.string().optional() }),
    z.object({ models: z.array(z.object({ provider: z.string(), model: z.string(), contextWindow: z.number().nullable(), vision: z.boolean().nullable() })) })),
  'settings/read': () => def('The product settings ($DSH_HOME/settings.yaml), with a revision for optimistic updates.', Empty,
    z.object({ settings: z.record(z.string(), JsonValue), revision: z.string(), file: z.string() })),
  'settings/update': () => def('Changes some settings; refused (SETTINGS_CONFLICT) when expectedRevision is stale.',
    z.strictObject({
      set: z.strictObject({ provider: z.string().optional(), model: z.string().optional(), permissionMode: PermissionMode.optional(), reasoningEffort: ReasoningEffort.optional() }),
      expectedRevision: z.string().optional(),
    }),
    z.object({ settings: z.record(z.string(), JsonValue), revision: z.string() })),
  'credentials/describe': () => def('Which providers have a key and where it comes from. Never the key.', Empty,
    z.object({ providers: z.array(z.object({ provider: z.string(), configured: z.boolean(), source: z.enum(['store', 'env']).nullable(), envVar: z.string() })) })),
  'credentials/set': () => def('Stores a provider key in the credential store (write-only: it is never returned).',
    z.strictObject({ provider: z.string().min(1), key: z.string().min(1).max(10_000) }), Ok),
  'credentials/unset': () => def('Removes a provider key from the credential store.', z.strictObject({ provider: z.string().min(1) }), Ok),
  'rpc/describe': () => def('Every method, server→client request and notification with its JSON Schema.', Empty,
    z.object({ protocolVersion: z.number(), methods: z.array(JsonValue), clientRequests: z.array(JsonValue), notifications: z.array(JsonValue) })),

  'session/create': () => def('A new session in an absolute, existing workspace; the caller owns it (answers its questions) and is subscribed to it.',
    z.strictObject({
      workspace: AbsolutePath,
      provider: z.string().min(1).optional(),
      model: z.string().min(1).optional(),
      reasoningEffort: ReasoningEffort.optional(),
      permissionMode: PermissionMode.optional(),
      agentPreset: z.string().min(1).optional(),
      roots: z.array(AbsolutePath).max(64).optional(),
      mcpServers: z.record(z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/), McpServerSpec).optional(),
      tools: z.array(ClientToolSpec).max(128).optional(),
      world: WorldSpec.optional(),
      title: z.string().min(1).max(500).optional(),
      maxTokens: z.number().int().positive().optional().describe('output token limit per request, while open here (not logged)'),
    }),
    z.object({ session: SessionDetail })),
  'session/open': () => def('Opens a stored session here (lock, load, repair of what a crash left open); the caller owns it and is subscribed from its end.',
    z.strictObject({ sessionId: SessionId, maxTokens: z.number().int().positive().optional().describe('output token limit per request, while open here') }),
    z.object({ session: SessionDetail })),
  'session/fork': () => def('A new session holding the source log up to a point (a seq, or an assistant message; a point inside a step rounds to the end of that step). The source is untouched.',
    z.strictObject({ sessionId: SessionId, atSeq: z.number().int().nonnegative().optional(), atMessageId: z.string().min(1).optional(), workspace: AbsolutePath.optional() }),
    z.object({ session: SessionDetail })),
  'session/list': () => def('Stored sessions, newest first; `query` searches titles and content.',
    z.strictObject({
      workspace: AbsolutePath.optional(), query: z.string().max(500).optional(), archived: z.boolean().optional(),
      cursor: z.string().max(200).optional(), limit: z.number().int().min(1).max(200).optional(),
    }),
    z.object({ sessions: z.array(SessionSummary), nextCursor: z.string().nullable() })),
  'session/get': () => def('One session\'s summary, config and status.', OfSession, z.object({ session: SessionDetail })),
  'session/rename': () => def('Sets the title (logged as a session/title event).', z.strictObject({ sessionId: SessionId, title: z.string().min(1).max(500) }), Ok),
  'session/archive': () => def('Hides a session from the default list (or shows it again).', z.strictObject({ sessionId: SessionId, archived: z.boolean() }), Ok),
  'session/delete': () => def('Deletes a stored session; refused while it runs.', OfSession, Ok),
  'session/close': () => def('Cancels what runs, flushes and releases the session here.', OfSession, Ok),
  'session/history': () => def('A page of the durable log with views (afterSeq/beforeSeq exclusive; at most `limit`, default 200).',
    z.strictObject({ sessionId: SessionId, afterSeq: z.number().int().min(-1).optional(), beforeSeq: z.number().int().nonnegative().optional(), limit: z.number().int().min(1).max(5000).optional() }),
    z.object({ items: z.array(ViewedEvent), lastSeq: z.number().int().min(-1), hasMore: z.boolean() })),
  'session/subscribe': () => def('Replays the durable log after `afterSeq` as session/event notifications, then continues live: no gap, no duplicate.',
    z.strictObject({ sessionId: SessionId, afterSeq: z.number().int().min(-1).optional() }),
    z.object({ lastSeq: z.number().int().min(-1), status: SessionStatus })),
  'session/unsubscribe': () => def('Stops session/event notifications of one session on this connection.', OfSession, Ok),
  'session/prompt': () => def('Sends a prompt. `queue` (default): starts a turn now, or the next one when a turn runs. `steer`: into the running turn (STEER_NO_TURN when none). Answers at once with a receipt; the turn arrives as session/event notifications ending with turn/end.',
    z.strictObject({ sessionId: SessionId, prompt: PromptInput, mode: z.enum(['queue', 'steer']).optional() }),
    z.object({ promptId: z.string().describe('the id of the user/message event this prompt becomes'), mode: z.enum(['queue', 'steer']), queued: z.boolean().describe('true when it waits behind a running turn') })),
  'session/cancel': () => def('Cancels the running turn (request aborted, running tools killed, every started call given a result) and drops prompts queued before it.',
    OfSession, z.object({ cancelled: z.boolean().describe('false when nothing ran') })),
  'session/set_model': () => def('The model for the next request; a model travels only with its provider.',
    z.strictObject({ sessionId: SessionId, provider: z.string().min(1).optional(), model: z.string().min(1).optional().describe('default: the provider\'s default model (when the provider changes), else the current one'), reasoningEffort: ReasoningEffort.nullable().optional() }),
    z.object({ config: SessionConfig })),
  'session/set_effort': () => def('The reasoning effort for the next request (null: the model\'s default).',
    z.strictObject({ sessionId: SessionId, reasoningEffort: ReasoningEffort.nullable() }), z.object({ config: SessionConfig })),
  'session/set_mode': () => def('The permission preset.', z.strictObject({ sessionId: SessionId, permissionMode: PermissionMode }), z.object({ config: SessionConfig })),
  'session/set_preset': () => def('The agent preset (tool set and model defaults).', z.strictObject({ sessionId: SessionId, agentPreset: z.string().min(1) }), z.object({ config: SessionConfig })),
  'session/command': () => def('Runs a slash command (`/status`, `/compact`, a skill\'s `/name`, …) without a model request unless the command starts a turn.',
    z.strictObject({ sessionId: SessionId, line: z.string().min(2).max(100_000).regex(/^\//, 'a command line starts with /') }),
    z.object({ name: z.string(), reply: z.string().nullable(), startedTurn: z.boolean(), newSessionId: z.string().nullable() })),
  'session/export': () => def('The session log as JSONL (header line, then one event per line).', OfSession, z.object({ jsonl: z.string() })),
  'session/respond': () => def('Answers a pending server→client request (web carrier; the SDK answers with a JSON-RPC response). Refused when the request is no longer pending or the caller does not own the session.',
    z.strictObject({ sessionId: SessionId, requestId: z.string().min(1), result: JsonValue }), Ok, ['web']),
})

export type MethodName = keyof typeof METHODS
export type ParamsOf<M extends MethodName> = z.input<typeof METHODS[M]['params']>
export type ResultOf<M extends MethodName> = z.output<typeof METHODS[M]['result']>

const ApprovalOption = z.object({ decision: ApprovalDecision, label: z.string(), scope: z.string().optional().describe('what allow-session covers') })

/** Server → client requests: sent only to the session's owner, which must have declared the capability. */
export const CLIENT_REQUESTS = lazyTable({
  'approval/request': () => def('A tool call needs the user\'s decision.',
    z.object({
      sessionId: SessionId, requestId: z.string(), toolCallId: z.string().nullable(), tool: z.string(), title: z.string(),
      kind: z.enum(['tool', 'escalation', 'plan']), rawInput: JsonValue, reason: z.string().nullable(),
      card: EventView.nullable().optional(), diff: z.object({ path: z.string(), oldText: z.string().nullable(), newText: z.string() }).optional(),
      options: z.array(ApprovalOption),
    }),
    z.object({ decision: ApprovalDecision })),
  'question/request': () => def('The model asks the user (the `question` tool): one to four questions, each with 2–4 options and an optional free answer.',
    z.object({
      sessionId: SessionId, requestId: z.string(), toolCallId: z.string(),
      questions: z.array(z.object({ id: z.string(), question: z.string(), options: z.array(z.object({ id: z.string(), label: z.string(), description: z.string().optional() })), allowFreeText: z.boolean(), multiSelect: z.boolean() })),
    }),
    z.object({ answers: z.array(z.object({ id: z.string(), selected: z.array(z.string()), text: z.string().optional() })) })),
  'tool/call': () => def('A client-defined tool was called; the answer is its result.',
    z.object({ sessionId: SessionId, requestId: z.string(), toolCallId: z.string(), tool: z.string(), arguments: JsonValue }),
    z.object({ content: z.union([z.string(), z.array(z.object({ type: z.literal('text'), text: z.string() }))]), isError: z.boolean().optional() })),
})

export type ClientRequestName = keyof typeof CLIENT_REQUESTS

/** Server → client notifications (only for subscribed sessions). */
export const NOTIFICATIONS = lazyTable({
  'session/event': () => def('A durable session event and its view, in seq order.', z.object({ sessionId: SessionId, event: SessionEvent, view: EventView }), z.null()),
  'session/status': () => def('A session\'s status changed. `error` is set once the session\'s log can no longer be written (e.g. SESSION_WRITE_FAILED on a full disk): the turn has stopped, its end could not be recorded, and the session takes no more prompts until it is reopened.',
    z.object({ sessionId: SessionId, status: SessionStatus, error: z.object({ code: z.string(), message: z.string(), hint: z.string().optional() }).optional() }), z.null()),
  'session/output': () => def('Live output of a running tool (not a session event: the final result carries it; may be dropped under load).',
    z.object({ sessionId: SessionId, toolCallId: z.string(), data: z.string() }), z.null()),
})

export type NotificationName = keyof typeof NOTIFICATIONS

export type { Usage }
export { SessionConfig, SessionDetail, SessionSummary, SessionStatus, ViewedEvent, EventView }
