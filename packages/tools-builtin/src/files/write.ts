import { defineTool, ToolError } from '@dsh/core'
import { FILE_BEFORE_EVENT, failpoint, textOf, type FileBeforeData } from '@dsh/protocol'
import { z } from 'zod'
import { displayPath, plural, splitLines } from '../text.js'
import type { FileStamps } from './stamps.js'

export const WriteParams = z.object({
  path: z.string().min(1).describe('The file, absolute or relative to the workspace. Missing parent directories are created.'),
  content: z.string().describe('The complete new content of the file.'),
})

/** The replaced content logged for a diff (`file/before`) is at most this big. */
const MAX_BEFORE_BYTES = 256 * 1024

export interface WriteValue { path: string; created: boolean; lines: number; bytes: number }

export function createWriteTool(stamps: FileStamps) {
  return defineTool({
    name: 'write',
    kind: 'edit',
    description: 'Create a file, or replace a whole file with new content. To overwrite an existing file, read it first in this session. '
      + 'For changes to part of a file prefer edit.',
    parameters: WriteParams,
    async execute(args, call): Promise<WriteValue> {
      const { fs } = call.ctx
      const abs = fs.resolve(call.cwd, args.path)
      const shown = displayPath(call.cwd, abs)
      const before = await fs.stat(abs)
      if (before?.type === 'directory') throw new ToolError(`${shown} is a directory.`)
      if (before) stamps.assertFresh(call, shown, await fs.realpath(abs), before, 'overwrite')
      const oldText = before && before.size <= MAX_BEFORE_BYTES ? await textOrUndefined(fs.readFile(abs, { maxBytes: MAX_BEFORE_BYTES })) : undefined
      const after = await fs.write(abs, args.content, call.policy)
      failpoint('write.finished')
      stamps.record(call, 'file/write', await fs.realpath(abs), after)
      if (oldText !== undefined) call.log(FILE_BEFORE_EVENT, { callId: call.callId, path: args.path, oldText } satisfies FileBeforeData, { ignorable: true })
      return { path: shown, created: !before, lines: splitLines(args.content).length, bytes: after.size }
    },
    output: {
      render: (v) => `${v.created ? 'Created' : 'Overwrote'} ${v.path} (${plural(v.lines, 'line')}, ${plural(v.bytes, 'byte')}).`,
    },
    presentCall: (args) => ({ card: 'diff', title: `Write ${args.path}`, path: args.path, oldText: null, newText: args.content }),
    presentResult: (args, result) => result.isError
      ? { card: 'generic', text: textOf(result.content), isError: true }
      : { card: 'diff', diffs: [{ path: args.path, oldText: null, newText: args.content }], text: textOf(result.content) },
  })
}

/** UTF-8 text, or undefined for a binary or unreadable file (its diff then shows no old side). */
async function textOrUndefined(bytes: Promise<Uint8Array>): Promise<string | undefined> {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(await bytes)
  } catch {
    return undefined
  }
}
