import type { Json } from '@dsh/protocol'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js'
import { z } from 'zod'

const validators = new AjvJsonSchemaValidator()

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The schema the model is shown for an MCP tool: the server's `inputSchema` as sent,
 * minus `id` (zod reads an `id` in metadata as a definition name and hoists the schema
 * into `$defs`; draft-4 ids carry nothing for the model). Never mutates its input.
 */
export function modelSchema(inputSchema: Record<string, unknown>): Record<string, Json> {
  const { id: _id, ...rest } = structuredClone(inputSchema)
  return { type: 'object', ...(rest as Record<string, Json>) }
}

/**
 * The `parameters` of an MCP tool, as a zod schema the registry understands.
 *
 * What the model sees: the server's own JSON Schema, verbatim (`modelSchema`). The
 * schema is `z.any()` carrying it as zod metadata, and zod's `toJSONSchema` (which the
 * registry's `toolSchema()` uses) emits metadata as the node's JSON Schema — so nothing
 * is lost in a JSON Schema → zod → JSON Schema round trip.
 *
 * What is validated: arguments must be a JSON object, checked against that same schema
 * by the SDK's own JSON Schema validator (ajv, the one the SDK validates tool output
 * with). When the schema cannot be compiled (an unresolvable `$ref`, …) only the
 * object check remains and the server stays the judge of its input. Validation never
 * changes the arguments: the server receives exactly what the model sent.
 */
export function toolParameters(inputSchema: Record<string, unknown>): z.ZodType<Record<string, unknown>> {
  const shown = modelSchema(inputSchema)
  let check: JsonSchemaValidator<unknown> | undefined
  try {
    check = validators.getValidator(shown as JsonSchemaType)
  } catch {
    check = undefined
  }
  return z.any().superRefine((value, ctx) => {
    if (!isObject(value)) {
      ctx.addIssue({ code: 'custom', message: 'arguments must be a JSON object' })
      return
    }
    const verdict = check?.(value)
    if (verdict && !verdict.valid) ctx.addIssue({ code: 'custom', message: verdict.errorMessage.replace(/(^|, )data(?=[/ ]|$)/g, '$1arguments') })
  }).meta(shown) as z.ZodType<Record<string, unknown>>
}
