import { defineTool, ToolError } from '@dsh/core'
import { textOf } from '@dsh/protocol'
import { z } from 'zod'
import { displayPath, plural } from '../text.js'
import { jsGrep, ripgrep, type GrepOutcome } from './engines.js'

export const GREP_DEFAULT_RESULTS = 100
export const GREP_MAX_RESULTS = 1000

export const GrepParams = z.object({
  pattern: z.string().min(1).describe('A regular expression, matched per line.'),
  path: z.string().optional().describe('A directory or file, absolute or relative to the workspace (default: the workspace).'),
  glob: z.string().optional().describe('Only files matching this glob, e.g. "*.ts" (any depth) or "src/**/*.py".'),
  ignore_case: z.boolean().optional().describe('Case-insensitive matching.'),
  max_results: z.number().int().min(1).max(GREP_MAX_RESULTS).optional().describe(`At most this many matching lines (default ${GREP_DEFAULT_RESULTS}).`),
})

export interface GrepValue extends GrepOutcome { pattern: string; where: string }

/** Which engine the grep tool uses: ripgrep when it runs (probed once), else the JS fallback. */
export interface GrepEngine { ripgrep(): Promise<string | undefined> }

export function renderGrep(v: GrepValue): string {
  if (v.matches.length === 0) return `No matches for /${v.pattern}/ in ${v.where}.`
  const lines = v.matches.map((m) => `${m.path}:${m.line}:${m.text}`)
  if (v.more) lines.push(`[showing the first ${plural(v.matches.length, 'match', 'matches')}; narrow the pattern, path or glob, or raise max_results]`)
  else if (!v.complete) lines.push('[the search stopped early; narrow the path]')
  return lines.join('\n')
}

export function createGrepTool(engine: GrepEngine) {
  return defineTool({
    name: 'grep',
    kind: 'search',
    concurrencySafe: true,
    description: 'Search file contents with a regular expression. Prints `path:line:text` per matching line, in path order; '
      + 'searches hidden files, skips .git, binary files and whatever .gitignore/.ignore files exclude.',
    parameters: GrepParams,
    async execute(args, call): Promise<GrepValue> {
      const { fs } = call.ctx
      const target = fs.resolve(call.cwd, args.path ?? '.')
      if (!(await fs.stat(target))) throw new ToolError(`${args.path ?? '.'} does not exist.`)
      const query = {
        pattern: args.pattern, target, cwd: call.cwd, ignoreCase: !!args.ignore_case, glob: args.glob,
        max: args.max_results ?? GREP_DEFAULT_RESULTS, signal: call.signal,
      }
      const rg = await engine.ripgrep()
      const outcome = rg ? await ripgrep(call.ctx.subprocess, rg, query) : await jsGrep(fs, query)
      // ripgrep reads files itself: drop what it found in dsh's secret files (the fs seam refuses those)
      const secret = new Set<string>()
      for (const file of new Set(outcome.matches.map((m) => m.path))) if (await fs.isSecret(fs.resolve(call.cwd, file))) secret.add(file)
      const matches = secret.size ? outcome.matches.filter((m) => !secret.has(m.path)) : outcome.matches
      return { ...outcome, matches, pattern: args.pattern, where: displayPath(call.cwd, target) }
    },
    output: { render: renderGrep },
    presentCall: (args) => ({ card: 'search', title: `Grep ${args.pattern}`, query: args.pattern, ...(args.path ? { path: args.path } : {}) }),
    presentResult: (_args, result) => {
      const text = textOf(result.content)
      if (result.isError) return { card: 'generic', text, isError: true }
      return { card: 'search', text, matches: text.split('\n').filter((l) => /^[^\n]*?:\d+:/.test(l)).length }
    },
  })
}
