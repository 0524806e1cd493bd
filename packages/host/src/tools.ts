import { defineTool, ToolError, type ToolDefinition } from '@dsh/core'
import { DshError, type Json, type ToolContent } from '@dsh/protocol'
import { z } from 'zod'
import type { Hosted } from './hosted.js'

declare module '@dsh/protocol' {
  interface SessionEventMap {
    /** The `question` tool asked the owner (pending until `question/answer`). */
    'question/request': { id: string; callId: string; questions: Json }
    /** The owner's answer, or why there is none (`error`). */
    'question/answer': { id: string; answers?: Json; error?: string }
  }
}

export const QUESTION_TOOL = 'question'

const QuestionArgs = z.object({
  questions: z.array(z.object({
    question: z.string().min(1).max(2000).describe('the question, ending with "?"'),
    options: z.array(z.object({
      label: z.string().min(1).max(200),
      description: z.string().max(1000).optional(),
    })).min(2).max(4).describe('2-4 answers to choose from'),
    allowFreeText: z.boolean().optional().describe('the user may answer in their own words instead'),
    multiSelect: z.boolean().optional().describe('more than one option may be chosen'),
  })).min(1).max(4),
})
type QuestionArgs = z.output<typeof QuestionArgs>
type Answer = { id: string; selected: string[]; text?: string }

/** The `question` tool of one session: asks its owner, logs request and answer, returns the answers. */
export function questionTool(hosted: Hosted): ToolDefinition<typeof QuestionArgs, string> {
  return defineTool({
    name: QUESTION_TOOL, kind: 'other',
    description: 'Ask the user one to four multiple-choice questions when a decision is theirs (2-4 options each, optionally a free answer). Returns their answers.',
    parameters: QuestionArgs,
    async execute(args: QuestionArgs, call) {
      const id = hosted.newId('q')
      const questions = args.questions.map((q, i) => ({
        id: `q${i + 1}`, question: q.question, allowFreeText: !!q.allowFreeText, multiSelect: !!q.multiSelect,
        options: q.options.map((o, k) => ({ id: `o${k + 1}`, label: o.label, ...(o.description ? { description: o.description } : {}) })),
      }))
      call.log('question/request', { id, callId: call.callId, questions })
      let answers: Answer[]
      try {
        const result = await hosted.ask('question/request', { sessionId: hosted.id, requestId: id, toolCallId: call.callId, questions }, call.signal)
        answers = checkAnswers(questions, (result as { answers?: unknown }).answers)
      } catch (error) {
        const reason = call.signal.aborted ? 'cancelled' : error instanceof Error ? error.message : String(error)
        call.log('question/answer', { id, error: reason })
        throw new ToolError(`The user did not answer (${reason}).`)
      }
      call.log('question/answer', { id, answers })
      return answers.map((a) => {
        const q = questions.find((x) => x.id === a.id)!
        const chosen = a.selected.map((o) => q.options.find((x) => x.id === o)!.label)
        return `${q.question}\n→ ${[...chosen, ...(a.text ? [`"${a.text}"`] : [])].join(', ') || '(no answer)'}`
      }).join('\n\n')
    },
    output: { render: (text: string) => text },
    presentCall: (args: QuestionArgs) => ({ card: 'generic', title: args.questions.map((q) => q.question).join(' / '), kind: 'other' }),
  })
}

function checkAnswers(questions: { id: string; options: { id: string }[]; allowFreeText: boolean; multiSelect: boolean }[], raw: unknown): Answer[] {
  if (!Array.isArray(raw)) throw new DshError('INVALID_ANSWER', 'the answer has no answers list')
  return raw.map((a: { id?: unknown; selected?: unknown; text?: unknown }) => {
    const q = questions.find((x) => x.id === a?.id)
    if (!q) throw new DshError('INVALID_ANSWER', `the answer names an unknown question ${JSON.stringify(a?.id)}`)
    const selected = Array.isArray(a.selected) ? a.selected.filter((s): s is string => typeof s === 'string') : []
    if (selected.some((s) => !q.options.some((o) => o.id === s))) throw new DshError('INVALID_ANSWER', `question ${q.id}: an unknown option was selected`)
    if (!q.multiSelect && selected.length > 1) throw new DshError('INVALID_ANSWER', `question ${q.id} takes one option`)
    const text = typeof a.text === 'string' && a.text ? a.text : undefined
    if (text && !q.allowFreeText) throw new DshError('INVALID_ANSWER', `question ${q.id} takes no free answer`)
    return { id: q.id, selected, ...(text ? { text } : {}) }
  })
}

export interface ClientToolSpec { name: string; description: string; inputSchema: Record<string, unknown> }

/**
 * Checks a session's client tool specs before anything is created: INVALID_PARAMS naming
 * `tools[i].name` (a clash with a registered tool, or a repeat) or `tools[i].inputSchema`.
 */
export function checkClientTools(specs: readonly ClientToolSpec[], taken: (name: string) => boolean): z.ZodType[] {
  const seen = new Set<string>()
  return specs.map((spec, i) => {
    const at = (field: string, message: string) => new DshError('INVALID_PARAMS', `tools[${i}].${field}: ${message}`, {
      data: { issues: [{ path: `params.tools.${i}.${field}`, message }] },
    })
    if (taken(spec.name) || spec.name === QUESTION_TOOL) throw at('name', `"${spec.name}" clashes with a built-in tool`)
    if (seen.has(spec.name)) throw at('name', `"${spec.name}" is defined twice`)
    seen.add(spec.name)
    if (spec.inputSchema.type !== 'object') throw at('inputSchema', 'must be a JSON Schema with "type": "object"')
    try {
      return z.fromJSONSchema(spec.inputSchema as never)
    } catch (error) {
      throw at('inputSchema', `not a usable JSON Schema (${(error as Error).message})`)
    }
  })
}

/** A client-defined tool: same pipeline as any tool; its body is a `tool/call` request to the session's owner. */
export function clientTool(hosted: Hosted, spec: ClientToolSpec, parameters: z.ZodType): ToolDefinition<z.ZodType, { content: ToolContent[]; isError: boolean }> {
  return defineTool({
    name: spec.name, description: spec.description, parameters, inputSchema: spec.inputSchema as Record<string, Json>, kind: 'other',
    async execute(args: unknown, call) {
      const requestId = hosted.newId('t')
      let result: { content?: unknown; isError?: unknown }
      try {
        result = await hosted.ask('tool/call', { sessionId: hosted.id, requestId, toolCallId: call.callId, tool: spec.name, arguments: (args ?? null) as Json }, call.signal)
      } catch (error) {
        if (call.signal.aborted) throw error
        throw new ToolError(`The client that defines ${spec.name} could not run it: ${error instanceof Error ? error.message : String(error)}`, 'CLIENT_TOOL_FAILED')
      }
      const content: ToolContent[] = typeof result.content === 'string' ? [{ type: 'text', text: result.content }]
        : Array.isArray(result.content) ? result.content.filter((p): p is ToolContent => !!p && typeof p === 'object' && (p as ToolContent).type === 'text' && typeof (p as { text?: unknown }).text === 'string')
        : [{ type: 'text', text: '(the client returned no content)' }]
      return { content, isError: result.isError === true }
    },
    output: { render: (value) => value.content, isError: (value) => value.isError },
  })
}
