import { abortError, TransportClosedError } from './errors.js'
import { Peer, type CallOptions } from './peer.js'
import { ServerProcess, type SpawnOptions, type Transport } from './process.js'
import { Session, type SessionHandlers } from './session.js'
import {
  CLIENT_METHODS, type ApprovalHandler, type ApprovalRequest, type ClientTool, type ParamsOf, type QuestionHandler,
  type QuestionRequest, type ResultOf, type SdkMethod, type SessionUpdate, type ToolCallRequest, type ToolCallResult,
} from './types.js'

export interface ClientOptions extends SpawnOptions {
  /** Sent in `initialize` (default `{name: "dsh-sdk-ts", version: "0.1.0"}`). */
  clientInfo?: { name: string; version: string }
  /** What this client answers (default: all three). Without `approvals` the server denies every approval itself. */
  capabilities?: { approvals?: boolean; questions?: boolean; tools?: boolean }
  /** Default approval answerer for every session (default: reject). */
  onApproval?: ApprovalHandler
  /** Default question answerer (default: none, the question is refused). */
  onQuestion?: QuestionHandler
  /** Notifications of sessions this client holds no Session object for, and unknown ones. */
  onNotification?: (method: string, params: unknown) => void
  /** Spawn → initialize answered, at most (default 30 s). */
  startTimeoutMs?: number
  /** close(): wait this long after EOF before SIGTERM, and as long again before SIGKILL (default 3000 ms). */
  closeGraceMs?: number
  /** Aborting closes the client. */
  signal?: AbortSignal
}

export type CreateSessionOptions = Omit<ParamsOf<'session/create'>, 'tools'> & Omit<SessionHandlers, 'tools'> & { tools?: ClientTool[] }

const reject: ApprovalHandler = () => 'reject'

/** Spawns `dsh sdk`, sends `initialize`, and resolves with the connected client. */
export async function createClient(options: ClientOptions = {}): Promise<Client> {
  const client = new Client(options)
  try {
    await client.start()
  } catch (error) {
    await client.close()
    throw error
  }
  return client
}

/**
 * One `dsh sdk` server process and its sessions. Methods are typed from the host table;
 * every call takes `{signal, timeoutMs}`. A server that dies fails every pending call
 * with TransportClosedError (exit code, signal, last stderr lines). `close()` walks EOF →
 * SIGTERM → SIGKILL; `await using client = await createClient()` closes it too.
 */
export class Client {
  /** The methods this client knows: the host table as served by the sdk carrier. */
  readonly methods: readonly SdkMethod[] = CLIENT_METHODS
  /** Lines the server wrote to stdout that were not JSON-RPC (must stay empty). */
  readonly protocolErrors: string[] = []
  initialized: ResultOf<'initialize'> | undefined
  private readonly process: Transport
  private readonly peer: Peer
  private readonly sessions = new Map<string, Session>()
  private closing: Promise<void> | undefined
  readonly defaults: { onApproval?: ApprovalHandler | undefined; onQuestion?: QuestionHandler | undefined }

  /** `transport` replaces the spawned server (tests); it gets the function that takes the server's bytes. */
  constructor(private readonly options: ClientOptions, transport?: (onData: (chunk: Buffer) => void) => Transport) {
    this.defaults = { onApproval: options.onApproval, onQuestion: options.onQuestion }
    this.peer = new Peer((text) => this.process.write(text), {
      request: (method, params, signal) => this.answer(method, params, signal),
      notification: (method, params) => this.notified(method, params),
      protocolError: (message) => { this.protocolErrors.push(message) },
    })
    const onData = (chunk: Buffer) => this.peer.push(chunk)
    this.process = transport ? transport(onData) : new ServerProcess(options, onData)
    void this.process.exited.then((error) => {
      this.peer.fail(error)
      for (const s of this.sessions.values()) s.end(this.closing ? undefined : error)
    })
    options.signal?.addEventListener('abort', () => void this.close(), { once: true })
  }

  /** Internal: the initialize exchange (createClient calls it). */
  async start(): Promise<void> {
    if (this.options.signal?.aborted) throw abortError(this.options.signal)
    const caps = { approvals: true, questions: true, tools: true, ...this.options.capabilities }
    const timeoutMs = this.options.startTimeoutMs ?? 30_000
    this.initialized = await this.call('initialize', {
      protocolVersion: 1, client: this.options.clientInfo ?? { name: 'dsh-sdk-ts', version: '0.1.0' }, capabilities: caps,
    }, { timeoutMs, signal: this.options.signal })
  }

  /** The server's process id. */
  get pid(): number | undefined {
    return this.process.pid
  }

  stderrTail(): string {
    return this.process.stderrTail()
  }

  call<M extends SdkMethod>(method: M, params: ParamsOf<M>, options: CallOptions = {}): Promise<ResultOf<M>> {
    return this.peer.call(method, params, options) as Promise<ResultOf<M>>
  }

  /** A new session owned by this client; `tools` execute here, `onApproval`/`onQuestion` answer for it. */
  async createSession(params: CreateSessionOptions, options: CallOptions = {}): Promise<Session> {
    const { tools, onApproval, onQuestion, ...rest } = params
    const wire: ParamsOf<'session/create'> = { ...rest, ...(tools?.length ? { tools: tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })) } : {}) }
    const { session } = await this.call('session/create', wire, options)
    return this.adopt(new Session(this, session, { tools, onApproval, onQuestion }))
  }

  /** Opens a stored session here (it resumes where its log ends). */
  async openSession(sessionId: string, handlers: SessionHandlers = {}, options: CallOptions = {}): Promise<Session> {
    const { session } = await this.call('session/open', { sessionId }, options)
    return this.adopt(new Session(this, session, handlers))
  }

  listSessions(params: ParamsOf<'session/list'> = {}, options: CallOptions = {}): Promise<ResultOf<'session/list'>> {
    return this.call('session/list', params, options)
  }

  /** Ends the server: EOF (it cancels turns, flushes and exits), then SIGTERM, then SIGKILL. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const grace = this.options.closeGraceMs ?? 3000
      const error = await this.process.stop(grace, grace)
      this.peer.fail(new TransportClosedError('the client was closed', error.exitCode, error.signal, error.stderrTail))
      for (const s of this.sessions.values()) s.end()
    })()
    return this.closing
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  private adopt(session: Session): Session {
    this.sessions.set(session.id, session)
    return session
  }

  private notified(method: string, params: unknown): void {
    const p = params as { sessionId?: string } & Partial<SessionUpdate>
    const session = p?.sessionId ? this.sessions.get(p.sessionId) : undefined
    if (method === 'session/event' && session && p.event) return session.deliver({ event: p.event, view: p.view ?? null })
    if (method === 'session/status' && session) session.detail = { ...session.detail, status: (params as { status: typeof session.detail.status }).status }
    this.options.onNotification?.(method, params)
  }

  private async answer(method: string, params: unknown, signal: AbortSignal): Promise<unknown> {
    const session = this.sessions.get((params as { sessionId?: string })?.sessionId ?? '')
    switch (method) {
      case 'approval/request': {
        const handler = session?.approvalHandler() ?? this.defaults.onApproval ?? reject
        return { decision: await handler(params as ApprovalRequest, { signal }) }
      }
      case 'question/request': {
        const handler = session?.questionHandler() ?? this.defaults.onQuestion
        if (!handler) throw new Error('this client has no question handler')
        return { answers: await handler(params as QuestionRequest, { signal }) }
      }
      case 'tool/call': {
        const call = params as ToolCallRequest
        const tool = session?.tools.get(call.tool)
        if (!tool) return { content: `no client tool named ${JSON.stringify(call.tool)} in this client`, isError: true }
        try {
          const out = await tool.execute(call.arguments, { signal, sessionId: call.sessionId, toolCallId: call.toolCallId })
          return typeof out === 'string' ? { content: out } : out satisfies ToolCallResult
        } catch (error) {
          return { content: error instanceof Error ? `${error.name}: ${error.message}` : String(error), isError: true }
        }
      }
      default: throw new Error(`unknown server request ${method}`)
    }
  }
}

