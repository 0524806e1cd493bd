import { defineTool } from '@dsh/core'
import type { Json } from '@dsh/protocol'
import { z } from 'zod'
import { plural } from './text.js'

export const TODO_EVENT = 'todo/write'

export const TodoItem = z.object({
  content: z.string().min(1).describe('The task, imperative ("Run the tests").'),
  status: z.enum(['pending', 'in_progress', 'completed']),
  activeForm: z.string().optional().describe('The task in progressive form ("Running the tests"), shown while in progress.'),
})
export const TodoParams = z.object({
  todos: z.array(TodoItem).describe('The whole plan: every item each time, in order (this call replaces the previous list).'),
})
export type Todo = z.output<typeof TodoItem>

/** The snapshot as plain JSON (absent fields omitted), as logged in `todo/write`. */
export function todoJson(todos: readonly Todo[]): Json[] {
  return todos.map((t) => ({ content: t.content, status: t.status, ...(t.activeForm !== undefined ? { activeForm: t.activeForm } : {}) }))
}

export function summarizeTodos(todos: readonly Todo[]): string {
  if (todos.length === 0) return 'The plan is now empty.'
  const count = (s: Todo['status']) => todos.filter((t) => t.status === s).length
  const current = todos.find((t) => t.status === 'in_progress')
  return `Plan updated: ${plural(todos.length, 'item')} (${count('completed')} completed, ${count('in_progress')} in progress, ${count('pending')} pending).`
    + (current ? ` Now: ${current.activeForm ?? current.content}.` : '')
}

/** A Markdown checklist for UIs. */
export function todoChecklist(todos: readonly Todo[]): string {
  if (todos.length === 0) return '_(empty plan)_'
  return todos.map((t) => t.status === 'completed' ? `- [x] ${t.content}`
    : t.status === 'in_progress' ? `- [ ] **${t.content}** (in progress)` : `- [ ] ${t.content}`).join('\n')
}

export const todoWriteTool = defineTool({
  name: 'todo_write',
  kind: 'think',
  description: 'Keep a plan for multi-step work: send the full list each time (it replaces the previous one). '
    + 'Keep exactly one item in_progress while working, and mark items completed as soon as they are done.',
  parameters: TodoParams,
  async execute(args, call): Promise<Todo[]> {
    call.log(TODO_EVENT, { todos: todoJson(args.todos) }, { ignorable: true })
    return args.todos
  },
  output: { render: summarizeTodos },
  presentCall: (args) => ({ card: 'generic', title: 'Update plan', kind: 'think', description: `${plural(args.todos.length, 'item')}` }),
  presentResult: (args) => ({ card: 'generic', text: todoChecklist(args.todos) }),
})
