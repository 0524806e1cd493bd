/** Reads what a step's `expect` checks out of an OpenAI, Anthropic or Responses request body (pure). */
import type { Expect } from './script.js'

export type MockProtocol = 'openai' | 'anthropic' | 'responses'

/** The protocol-neutral view of a request that expectations are checked against. */
export interface RequestView {
  protocol: MockProtocol
  model: string
  system: string
  lastUserText: string | undefined
  lastToolResult: string | undefined
  tools: string[]
}

type Obj = Record<string, unknown>

function obj(value: unknown): Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Obj : {}
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : []
}

const TEXT_PARTS = new Set(['text', 'input_text', 'output_text'])

/** Text of a string or of the text parts (`text`, Responses `input_text`/`output_text`) of a content list. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  return list(content).map(obj).filter((p) => TEXT_PARTS.has(p.type as string) && typeof p.text === 'string').map((p) => p.text as string).join('\n')
}

function openaiView(body: Obj): RequestView {
  const messages = list(body.messages).map(obj)
  let lastUserText: string | undefined
  let lastToolResult: string | undefined
  for (const m of messages) {
    if (m.role === 'user') lastUserText = textOf(m.content)
    if (m.role === 'tool') lastToolResult = textOf(m.content)
  }
  return {
    protocol: 'openai',
    model: String(body.model ?? ''),
    system: messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content)).join('\n'),
    lastUserText,
    lastToolResult,
    tools: list(body.tools).map((t) => String(obj(obj(t).function).name ?? '')),
  }
}

function anthropicView(body: Obj): RequestView {
  let lastUserText: string | undefined
  let lastToolResult: string | undefined
  for (const m of list(body.messages).map(obj)) {
    if (m.role !== 'user') continue
    if (typeof m.content === 'string') {
      lastUserText = m.content
      continue
    }
    const blocks = list(m.content).map(obj)
    if (blocks.some((b) => b.type === 'text')) lastUserText = textOf(blocks)
    for (const b of blocks) if (b.type === 'tool_result') lastToolResult = textOf(b.content)
  }
  return {
    protocol: 'anthropic',
    model: String(body.model ?? ''),
    system: textOf(body.system),
    lastUserText,
    lastToolResult,
    tools: list(body.tools).map((t) => String(obj(t).name ?? '')),
  }
}

/** Tool names offered, namespaces flattened; a built-in tool without a name (web_search) by its type. */
function responsesTools(tools: unknown): string[] {
  return list(tools).map(obj).flatMap((t) => t.type === 'namespace' ? responsesTools(t.tools) : [String(t.name ?? t.type ?? '')])
}

function responsesView(body: Obj): RequestView {
  const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : list(body.input).map(obj)
  let lastUserText: string | undefined
  let lastToolResult: string | undefined
  const system: string[] = typeof body.instructions === 'string' && body.instructions !== '' ? [body.instructions] : []
  for (const item of input) {
    if (item.type === 'function_call_output') lastToolResult = textOf(item.output)
    else if ((item.type ?? 'message') !== 'message') continue
    else if (item.role === 'user') lastUserText = textOf(item.content)
    else if (item.role === 'system' || item.role === 'developer') system.push(textOf(item.content))
  }
  return { protocol: 'responses', model: String(body.model ?? ''), system: system.join('\n'), lastUserText, lastToolResult, tools: responsesTools(body.tools) }
}

export function viewRequest(protocol: MockProtocol, body: unknown): RequestView {
  switch (protocol) {
    case 'openai': return openaiView(obj(body))
    case 'anthropic': return anthropicView(obj(body))
    case 'responses': return responsesView(obj(body))
  }
}

function quote(text: string | undefined): string {
  if (text === undefined) return '(none)'
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text)
}

/** Every unmet expectation, as one line each (empty when the request matches). */
export function checkExpect(expect: Expect | undefined, view: RequestView): string[] {
  if (!expect) return []
  const problems: string[] = []
  const includes = (key: string, want: string | undefined, got: string | undefined): void => {
    if (want !== undefined && !(got ?? '').includes(want)) problems.push(`${key} ${JSON.stringify(want)} not found in ${quote(got)}`)
  }
  includes('lastUserTextIncludes', expect.lastUserTextIncludes, view.lastUserText)
  includes('lastToolResultIncludes', expect.lastToolResultIncludes, view.lastToolResult)
  includes('systemIncludes', expect.systemIncludes, view.system)
  for (const tool of expect.toolsInclude ?? []) {
    if (!view.tools.includes(tool)) problems.push(`toolsInclude: tool "${tool}" not offered (offered: ${view.tools.join(', ') || 'none'})`)
  }
  if (expect.model !== undefined && expect.model !== view.model) problems.push(`model: expected "${expect.model}", got "${view.model}"`)
  if (expect.protocol !== undefined && expect.protocol !== view.protocol) problems.push(`protocol: expected ${expect.protocol}, got ${view.protocol}`)
  return problems
}
