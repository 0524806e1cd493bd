import { Service, type Context } from '@deepseek-ai/cordis'
import type { Session } from '../session/session.js'
import { Agent } from './agent.js'
import type { AgentOptions } from './types.js'

declare module '@deepseek-ai/cordis' {
  interface Context { agents: AgentService }
}

/** `ctx.agents`: one agent per open session; unloading the plugin cancels them all. */
export class AgentService extends Service {
  private readonly agents = new Map<string, Agent>()

  constructor(ctx: Context, private readonly defaults: AgentOptions) {
    super(ctx, 'agents')
    ctx.effect(() => () => {
      for (const agent of this.agents.values()) agent.cancel()
      this.agents.clear()
    })
  }

  create(session: Session, options: AgentOptions = {}): Agent {
    this.agents.get(session.id)?.cancel()
    const agent = new Agent(this.ctx, session, { ...this.defaults, ...stripUndefined(options) })
    this.agents.set(session.id, agent)
    return agent
  }

  get(sessionId: string): Agent | undefined {
    return this.agents.get(sessionId)
  }

  /** Forgets the agent (after cancelling it); the session itself is closed by its owner. */
  remove(sessionId: string): void {
    this.agents.get(sessionId)?.cancel()
    this.agents.delete(sessionId)
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
}
