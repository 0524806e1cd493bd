import { defineTool, ToolError } from '@dsh/core'
import { textOf } from '@dsh/protocol'
import { z } from 'zod'
import { byName, displayPath, fence } from '../text.js'

export const LS_MAX_ENTRIES = 1000

export const LsParams = z.object({
  path: z.string().optional().describe('The directory, absolute or relative to the workspace (default: the workspace).'),
})

export interface LsValue { path: string; entries: string[]; total: number }

export const lsTool = defineTool({
  name: 'ls',
  kind: 'read',
  concurrencySafe: true,
  description: 'List a directory (not recursive): directories end with "/", symlinks with "@". Use glob to find files by pattern.',
  parameters: LsParams,
  async execute(args, call): Promise<LsValue> {
    const { fs } = call.ctx
    const abs = fs.resolve(call.cwd, args.path ?? '.')
    const shown = displayPath(call.cwd, abs)
    const st = await fs.stat(abs)
    if (!st) throw new ToolError(`${shown} does not exist.`)
    if (st.type !== 'directory') throw new ToolError(`${shown} is not a directory; use read for files.`)
    const entries = (await fs.readdir(abs))
      .sort(byName)
      .map((e) => e.name + (e.type === 'directory' ? '/' : e.type === 'symlink' ? '@' : ''))
    return { path: shown, entries: entries.slice(0, LS_MAX_ENTRIES), total: entries.length }
  },
  output: {
    render(v) {
      if (v.total === 0) return `${v.path} is empty.`
      const more = v.total > v.entries.length ? `\n[${v.total - v.entries.length} more entries not shown; use glob to narrow down]` : ''
      return `${v.path}:\n${v.entries.join('\n')}${more}`
    },
  },
  presentCall: (args) => ({ card: 'generic', title: `List ${args.path ?? '.'}`, kind: 'read', locations: [{ path: args.path ?? '.' }] }),
  presentResult: (_args, result) => ({ card: 'generic', text: fence(textOf(result.content)), ...(result.isError ? { isError: true } : {}) }),
})
