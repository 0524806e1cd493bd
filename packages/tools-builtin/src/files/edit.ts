import { defineTool, ToolError } from '@dsh/core'
import { textOf } from '@dsh/protocol'
import { z } from 'zod'
import { binaryKind, displayPath, isBinary } from '../text.js'
import { applyEdits, describeEdits, type EditSpec } from './apply-edits.js'
import { READ_MAX_BYTES } from './read.js'
import type { FileStamps } from './stamps.js'

const Edit = z.object({
  old_string: z.string().describe('Exact text to replace (whitespace and indentation included); it must match exactly once unless replace_all.'),
  new_string: z.string().describe('The replacement text.'),
  replace_all: z.boolean().optional().describe('Replace every match of old_string.'),
})

export const EditParams = z.object({
  path: z.string().min(1).describe('The file, absolute or relative to the workspace.'),
  old_string: z.string().optional().describe('For one edit: the exact text to replace.'),
  new_string: z.string().optional().describe('For one edit: the replacement.'),
  replace_all: z.boolean().optional().describe('For one edit: replace every match of old_string.'),
  edits: z.array(Edit).min(1).optional().describe('Several edits to the same file, applied in order, all or none. Use instead of old_string/new_string.'),
})
export type EditArgs = z.output<typeof EditParams>

export interface EditValue { path: string; replacements: number[] }

/** The edits of a call, or a ToolError saying how to fix the arguments. */
export function editsOf(args: EditArgs): EditSpec[] {
  const single = args.old_string !== undefined || args.new_string !== undefined
  if (args.edits && single) throw new ToolError('Give either old_string/new_string or edits, not both.')
  if (args.edits) return args.edits
  if (args.old_string === undefined || args.new_string === undefined) {
    throw new ToolError('Give old_string and new_string (or an edits array).')
  }
  return [{ old_string: args.old_string, new_string: args.new_string, replace_all: args.replace_all }]
}

export function createEditTool(stamps: FileStamps) {
  return defineTool({
    name: 'edit',
    kind: 'edit',
    description: 'Replace exact text in a file: old_string must match the file exactly once (copy it from read output without the line-number prefix), '
      + 'or set replace_all. Several edits to one file go in `edits` and are applied in order, all or none. '
      + 'A file that changed on disk since you last read it is refused: read it again first.',
    parameters: EditParams,
    async execute(args, call): Promise<EditValue> {
      const { fs } = call.ctx
      const edits = editsOf(args)
      const abs = fs.resolve(call.cwd, args.path)
      const shown = displayPath(call.cwd, abs)
      const st = await fs.stat(abs)
      if (!st) throw new ToolError(`${shown} does not exist. To create it use write.`)
      if (st.type !== 'file') throw new ToolError(`${shown} is not a regular file.`)
      const real = await fs.realpath(abs)
      stamps.assertFresh(call, shown, real, st, 'edit')
      const bytes = await fs.readFile(abs, { maxBytes: READ_MAX_BYTES })
      if (isBinary(bytes)) throw new ToolError(`${shown} is a binary file${binaryKind(bytes) ? ` (${binaryKind(bytes)})` : ''}; edit only changes text.`)
      const { text, replacements } = applyEdits(new TextDecoder().decode(bytes), edits)
      const after = await fs.write(abs, text, call.policy)
      stamps.record(call, 'file/write', real, after)
      return { path: shown, replacements }
    },
    output: { render: (v) => describeEdits(v.path, v.replacements) },
    presentCall(args) {
      if (args.edits && args.edits.length > 1) {
        return { card: 'generic', title: `Edit ${args.path} (${args.edits.length} edits)`, kind: 'edit', locations: [{ path: args.path }] }
      }
      const one = args.edits?.[0] ?? { old_string: args.old_string ?? '', new_string: args.new_string ?? '' }
      return { card: 'diff', title: `Edit ${args.path}`, path: args.path, oldText: one.old_string, newText: one.new_string }
    },
    presentResult(args, result) {
      if (result.isError) return { card: 'generic', text: textOf(result.content), isError: true }
      const edits = args.edits ?? [{ old_string: args.old_string ?? '', new_string: args.new_string ?? '' }]
      return { card: 'diff', diffs: edits.map((e) => ({ path: args.path, oldText: e.old_string, newText: e.new_string })), text: textOf(result.content) }
    },
  })
}
