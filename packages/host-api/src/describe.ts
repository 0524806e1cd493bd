import { z } from 'zod'
import { CLIENT_REQUESTS, METHODS, NOTIFICATIONS, PROTOCOL_VERSION, type MethodDef } from './methods.js'

export interface MethodSchema {
  name: string
  description: string
  carriers?: readonly string[]
  params: unknown
  result: unknown
}

function schema(type: z.ZodType, io: 'input' | 'output'): unknown {
  const json = z.toJSONSchema(type, { io, unrepresentable: 'any' }) as Record<string, unknown>
  delete json.$schema
  return json
}

function entries(table: Record<string, MethodDef>, withCarriers: boolean): MethodSchema[] {
  return Object.entries(table).map(([name, d]) => ({
    name, description: d.description, ...(withCarriers ? { carriers: d.carriers } : {}),
    params: schema(d.params, 'input'), result: schema(d.result, 'output'),
  }))
}

/** `rpc/describe`: every method's JSON Schema, for the Python client, docs and the parity test. */
export function describeRpc(): { protocolVersion: number; methods: MethodSchema[]; clientRequests: MethodSchema[]; notifications: MethodSchema[] } {
  return {
    protocolVersion: PROTOCOL_VERSION,
    methods: entries(METHODS, true),
    clientRequests: entries(CLIENT_REQUESTS, false),
    notifications: entries(NOTIFICATIONS, false),
  }
}
