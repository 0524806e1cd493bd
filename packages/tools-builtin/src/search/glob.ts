import { defineTool, ToolError } from '@dsh/core'
import { textOf } from '@dsh/protocol'
import picomatch from 'picomatch'
import { z } from 'zod'
import { displayPath, plural } from '../text.js'
import { walkFiles } from './walk.js'

export const GLOB_MAX_RESULTS = 500

export const GlobParams = z.object({
  pattern: z.string().min(1).describe('A glob relative to path, e.g. "**/*.ts" or "src/**/test_*.py" ("*.ts" matches only the top level).'),
  path: z.string().optional().describe('The directory to search, absolute or relative to the workspace (default: the workspace).'),
})

export interface GlobValue { pattern: string; root: string; files: string[]; more: boolean; complete: boolean }

export const globTool = defineTool({
  name: 'glob',
  kind: 'search',
  concurrencySafe: true,
  description: 'Find files by glob pattern (name order), skipping .git and whatever .gitignore/.ignore files exclude. '
    + `Returns at most ${GLOB_MAX_RESULTS} paths.`,
  parameters: GlobParams,
  async execute(args, call): Promise<GlobValue> {
    const { fs } = call.ctx
    const root = fs.resolve(call.cwd, args.path ?? '.')
    const st = await fs.stat(root)
    if (st?.type !== 'directory') throw new ToolError(`${args.path ?? '.'} is not an existing directory.`)
    const match = picomatch(args.pattern.replace(/^\.\//, ''), { dot: true })
    const files: string[] = []
    let more = false
    const { complete } = await walkFiles(fs, root, ({ abs, rel }) => {
      if (!match(rel)) return
      if (files.length >= GLOB_MAX_RESULTS) {
        more = true
        return false
      }
      files.push(displayPath(call.cwd, abs))
    }, { signal: call.signal })
    return { pattern: args.pattern, root: displayPath(call.cwd, root), files, more, complete: complete || more }
  },
  output: {
    render(v) {
      if (v.files.length === 0) return `No files match ${v.pattern} in ${v.root}.${v.complete ? '' : ' (The search stopped early: the tree is very large.)'}`
      const notes = [
        ...(v.more ? [`[showing the first ${plural(v.files.length, 'file')}; narrow the pattern or path]`] : []),
        ...(!v.complete ? ['[the search stopped early: the tree is very large; narrow the path]'] : []),
      ]
      return [...v.files, ...notes].join('\n')
    },
  },
  presentCall: (args) => ({ card: 'search', title: `Glob ${args.pattern}`, query: args.pattern, ...(args.path ? { path: args.path } : {}) }),
  presentResult: (_args, result) => {
    const text = textOf(result.content)
    if (result.isError) return { card: 'generic', text, isError: true }
    return { card: 'search', text, matches: text.startsWith('No files match') ? 0 : text.split('\n').filter((l) => !l.startsWith('[')).length }
  },
})
