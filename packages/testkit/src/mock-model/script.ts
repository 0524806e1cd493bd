/**
 * The mock model's script: an ordered list of steps, one consumed per model request.
 * Scripts are plain data (YAML or JSON files, or objects in tests) and are validated
 * strictly: an unknown key or a wrong type is an error naming the step and key, so a typo
 * never silently turns into an empty answer.
 */
import { readFile } from 'node:fs/promises'
import { parse as parseYaml } from 'yaml'

/** Checks made on the request a step answers; a mismatch fails the request loudly (HTTP 400). */
export interface Expect {
  /** Text of the last user message that has text (tool results are not user text). */
  lastUserTextIncludes?: string
  /** Text of the last tool result in the request. */
  lastToolResultIncludes?: string
  systemIncludes?: string
  /** Tool names that must be offered. */
  toolsInclude?: string[]
  model?: string
  protocol?: 'openai' | 'anthropic' | 'responses'
}

export interface ToolCallSpec {
  /** Default: `call_<n>`, n counting tool calls since the server started (or was reset). */
  id?: string
  name: string
  /** An object is sent as `JSON.stringify(arguments)`; a string is sent raw. */
  arguments: unknown
}

export type FinishKind = 'stop' | 'tool-calls' | 'max-tokens'

export interface ReplyStep {
  text?: string
  reasoning?: string
  toolCalls?: ToolCallSpec[]
  /** Token counts to report; missing ones are estimated from lengths (chars / 4). `input` includes `cacheRead`. */
  usage?: { input?: number; output?: number; cacheRead?: number }
  /** Default: 'tool-calls' when toolCalls are present, else 'stop'. */
  finish?: FinishKind
  /** Characters per streamed delta (text, reasoning and tool arguments); default 16. */
  chunkSize?: number
  /** Pause between streamed chunks. */
  delayMs?: number
  expect?: Expect
}

export interface ErrorStep {
  error: {
    status: number
    message?: string
    /** Seconds; sent as the `retry-after` header. */
    retryAfter?: number
    /** Answer 200 and report the error inside the stream (Anthropic `error` event / OpenAI error data line). */
    inStream?: boolean
  }
  expect?: Expect
}

/**
 * - cut: stream a little text, then destroy the socket (no terminator)
 * - malformed: a data line that is not JSON, then end the response
 * - stall: headers and one chunk, then nothing until the client goes away
 * - empty: a complete stream with no content
 */
export type FaultKind = 'cut' | 'malformed' | 'stall' | 'empty'

export interface FaultStep {
  fault: FaultKind
  /** The partial text sent by cut/stall (default "partial answer"). */
  text?: string
  expect?: Expect
}

export type Step = ReplyStep | ErrorStep | FaultStep
export type Script = Step[]

export function isErrorStep(step: Step): step is ErrorStep {
  return 'error' in step
}

export function isFaultStep(step: Step): step is FaultStep {
  return 'fault' in step
}

class ScriptError extends Error {
  override name = 'ScriptError'
}

type Obj = Record<string, unknown>

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function checkKeys(value: Obj, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new ScriptError(`${where}: unknown key "${key}" (allowed: ${allowed.join(', ')})`)
  }
}

function checkType(value: Obj, key: string, type: 'string' | 'number' | 'boolean', where: string): void {
  if (value[key] !== undefined && typeof value[key] !== type) throw new ScriptError(`${where}.${key}: expected a ${type}`)
}

function checkOneOf(value: Obj, key: string, options: readonly string[], where: string): void {
  if (value[key] !== undefined && !options.includes(value[key] as string)) {
    throw new ScriptError(`${where}.${key}: expected one of ${options.join(', ')}`)
  }
}

function checkExpect(value: unknown, where: string): void {
  if (value === undefined) return
  if (!isObj(value)) throw new ScriptError(`${where}: expected an object`)
  checkKeys(value, ['lastUserTextIncludes', 'lastToolResultIncludes', 'systemIncludes', 'toolsInclude', 'model', 'protocol'], where)
  for (const key of ['lastUserTextIncludes', 'lastToolResultIncludes', 'systemIncludes', 'model']) checkType(value, key, 'string', where)
  checkOneOf(value, 'protocol', ['openai', 'anthropic', 'responses'], where)
  const tools = value.toolsInclude
  if (tools !== undefined && !(Array.isArray(tools) && tools.every((t) => typeof t === 'string'))) {
    throw new ScriptError(`${where}.toolsInclude: expected a list of strings`)
  }
}

function checkStep(step: unknown, where: string): Step {
  if (!isObj(step)) throw new ScriptError(`${where}: expected an object`)
  checkExpect(step.expect, `${where}.expect`)
  if ('error' in step) {
    checkKeys(step, ['error', 'expect'], where)
    const error = step.error
    if (!isObj(error)) throw new ScriptError(`${where}.error: expected an object`)
    checkKeys(error, ['status', 'message', 'retryAfter', 'inStream'], `${where}.error`)
    if (!Number.isInteger(error.status) || (error.status as number) < 100 || (error.status as number) > 599) {
      throw new ScriptError(`${where}.error.status: expected an HTTP status (100-599)`)
    }
    checkType(error, 'message', 'string', `${where}.error`)
    checkType(error, 'retryAfter', 'number', `${where}.error`)
    checkType(error, 'inStream', 'boolean', `${where}.error`)
    return step as unknown as ErrorStep
  }
  if ('fault' in step) {
    checkKeys(step, ['fault', 'text', 'expect'], where)
    checkOneOf(step, 'fault', ['cut', 'malformed', 'stall', 'empty'], where)
    checkType(step, 'text', 'string', where)
    return step as unknown as FaultStep
  }
  checkKeys(step, ['text', 'reasoning', 'toolCalls', 'usage', 'finish', 'chunkSize', 'delayMs', 'expect'], where)
  checkType(step, 'text', 'string', where)
  checkType(step, 'reasoning', 'string', where)
  checkOneOf(step, 'finish', ['stop', 'tool-calls', 'max-tokens'], where)
  if (step.chunkSize !== undefined && !(Number.isInteger(step.chunkSize) && (step.chunkSize as number) > 0)) {
    throw new ScriptError(`${where}.chunkSize: expected a positive integer`)
  }
  if (step.delayMs !== undefined && !(typeof step.delayMs === 'number' && step.delayMs >= 0)) {
    throw new ScriptError(`${where}.delayMs: expected a non-negative number`)
  }
  if (step.usage !== undefined) {
    if (!isObj(step.usage)) throw new ScriptError(`${where}.usage: expected an object`)
    checkKeys(step.usage, ['input', 'output', 'cacheRead'], `${where}.usage`)
    for (const key of ['input', 'output', 'cacheRead']) checkType(step.usage, key, 'number', `${where}.usage`)
  }
  if (step.toolCalls !== undefined) {
    if (!Array.isArray(step.toolCalls)) throw new ScriptError(`${where}.toolCalls: expected a list`)
    step.toolCalls.forEach((call: unknown, i) => {
      const at = `${where}.toolCalls[${i}]`
      if (!isObj(call)) throw new ScriptError(`${at}: expected an object`)
      checkKeys(call, ['id', 'name', 'arguments'], at)
      if (typeof call.name !== 'string' || call.name === '') throw new ScriptError(`${at}.name: expected a non-empty string`)
      checkType(call, 'id', 'string', at)
    })
  }
  return step as ReplyStep
}

/** Validates script data: a list of steps, or `{steps: [...]}`. `source` names it in errors. */
export function parseScript(data: unknown, source = 'script'): Script {
  const steps = isObj(data) && 'steps' in data ? data.steps : data
  if (isObj(data)) checkKeys(data, ['steps'], source)
  if (!Array.isArray(steps)) throw new ScriptError(`${source}: expected a list of steps (or {steps: [...]})`)
  return steps.map((step, i) => checkStep(step, `${source}: step ${i + 1}`))
}

/** Parses YAML or JSON text (JSON is YAML) into a validated script. */
export function parseScriptText(text: string, source = 'script'): Script {
  let data: unknown
  try {
    data = parseYaml(text)
  } catch (error) {
    throw new ScriptError(`${source}: not valid YAML/JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
  return parseScript(data ?? [], source)
}

/** Loads a `.yml`/`.yaml`/`.json` script file. */
export async function loadScript(path: string): Promise<Script> {
  return parseScriptText(await readFile(path, 'utf8'), path)
}
