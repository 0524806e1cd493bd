import { defineTool, ToolError } from '@dsh/core'
import { isDshError, textOf } from '@dsh/protocol'
import { z } from 'zod'
import { binaryKind, displayPath, isBinary, numberLine, splitLines } from '../text.js'
import type { FileStamps } from './stamps.js'

export const READ_DEFAULT_LIMIT = 2000
export const READ_MAX_LINE = 2000
export const READ_MAX_CHARS = 100_000
export const READ_MAX_BYTES = 10 * 1024 * 1024

export const ReadParams = z.object({
  path: z.string().min(1).describe('The file, absolute or relative to the workspace.'),
  offset: z.number().int().min(1).optional().describe('The 1-based line to start at (default 1).'),
  limit: z.number().int().min(1).optional().describe(`How many lines to show (default ${READ_DEFAULT_LIMIT}).`),
})
export type ReadArgs = z.output<typeof ReadParams>

export interface ReadValue { path: string; text: string }

/**
 * Numbered lines [offset, offset+limit) of `text`, each cut at READ_MAX_LINE characters,
 * the whole capped at READ_MAX_CHARS, with a closing note saying how to page on.
 */
export function numberedSlice(text: string, offset = 1, limit = READ_DEFAULT_LIMIT): string {
  const lines = splitLines(text)
  if (lines.length === 0) return '(empty file)'
  if (offset > lines.length) throw new ToolError(`offset ${offset} is past the end: the file has ${lines.length} lines.`)
  const out: string[] = []
  let chars = 0
  let last = offset - 1
  const end = Math.min(lines.length, offset - 1 + limit)
  for (let i = offset - 1; i < end; i++) {
    let line = lines[i]!
    if (line.length > READ_MAX_LINE) line = `${line.slice(0, READ_MAX_LINE)} … [${line.length - READ_MAX_LINE} more characters]`
    const numbered = numberLine(i + 1, line)
    if (out.length > 0 && chars + numbered.length > READ_MAX_CHARS) break
    out.push(numbered)
    chars += numbered.length + 1
    last = i + 1
  }
  if (last < lines.length) {
    out.push(`[showing lines ${offset}-${last} of ${lines.length}; call read with offset=${last + 1} to continue]`)
  }
  return out.join('\n')
}

/** The file content back from the numbered text (for the read card): numbers and notes removed. */
export function stripNumbers(text: string): string {
  const out: string[] = []
  for (const line of text.split('\n')) {
    const m = /^ *\d+\t/.exec(line)
    if (m) out.push(line.slice(m[0].length))
  }
  return out.join('\n')
}

export function createReadTool(stamps: FileStamps) {
  return defineTool({
    name: 'read',
    kind: 'read',
    concurrencySafe: true,
    description: `Read a text file. Lines are numbered like \`cat -n\` (the number and a tab are not part of the file). `
      + `Shows up to ${READ_DEFAULT_LIMIT} lines from offset; long lines are cut. Binary files are refused.`,
    parameters: ReadParams,
    async execute(args, call): Promise<ReadValue> {
      const { fs } = call.ctx
      const abs = fs.resolve(call.cwd, args.path)
      const shown = displayPath(call.cwd, abs)
      const st = await fs.stat(abs)
      if (!st) throw new ToolError(`${shown} does not exist.`)
      if (st.type === 'directory') throw new ToolError(`${shown} is a directory; use ls to list it.`)
      if (st.type !== 'file') throw new ToolError(`${shown} is not a regular file (a device, FIFO or socket): read only reads files.`)
      let bytes: Uint8Array
      try {
        bytes = await fs.readFile(abs, { maxBytes: READ_MAX_BYTES })
      } catch (error) {
        if (isDshError(error, 'FILE_TOO_LARGE')) {
          throw new ToolError(`${shown} is ${st.size} bytes, over the ${READ_MAX_BYTES}-byte limit of read. `
            + `Page through it with bash (e.g. \`sed -n '1,200p' ${shown}\`), or search it with grep.`)
        }
        throw error
      }
      if (isBinary(bytes)) {
        const kind = binaryKind(bytes)
        throw new ToolError(`${shown} is a binary file (${bytes.length} bytes${kind ? `, ${kind}` : ''}); read only shows text. `
          + `Inspect it with bash instead, e.g. \`file ${shown}\` or \`xxd ${shown} | head -n 20\`.`)
      }
      const text = numberedSlice(new TextDecoder().decode(bytes), args.offset, args.limit)
      stamps.record(call, 'file/read', await fs.realpath(abs), st)
      return { path: shown, text }
    },
    output: { render: (value) => value.text },
    presentCall: (args) => ({
      card: 'read', title: `Read ${args.path}`, path: args.path,
      ...(args.offset !== undefined ? { line: args.offset } : {}), ...(args.limit !== undefined ? { limit: args.limit } : {}),
    }),
    presentResult: (args, result) => result.isError
      ? { card: 'generic', text: textOf(result.content), isError: true }
      : { card: 'read', path: args.path, text: stripNumbers(textOf(result.content)) },
  })
}
