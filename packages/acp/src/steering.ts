import * as acp from '@agentclientprotocol/sdk/unstable'

export const STEERING_METHOD = '_session/steering'

export interface SteeringParams { sessionId: string; prompt: acp.ContentBlock[]; _meta?: Record<string, unknown> | null }

export function parseSteering(params: unknown): SteeringParams {
  const p = params as Partial<SteeringParams> | null
  if (!p || typeof p !== 'object' || typeof p.sessionId !== 'string' || !Array.isArray(p.prompt)) {
    throw new acp.RequestError(-32602, 'Invalid params: _session/steering needs {sessionId: string, prompt: ContentBlock[]}')
  }
  return { sessionId: p.sessionId, prompt: p.prompt, ...(p._meta ? { _meta: p._meta } : {}) }
}
