import { REASONING_EFFORTS } from '@dsh/protocol'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { basename, extname, join } from 'node:path'
import { z } from 'zod'
import { DshError, type ReasoningEffort } from '@dsh/protocol'
import { keyPath, parseHomeYaml } from '../home/files.js'

/**
 * A named composition of an agent: a persona paragraph for the system prompt, the tool
 * set it offers, and its default model and effort. Chosen per session before the first
 * turn (`agent/preset`).
 */
export interface AgentPreset {
  id: string
  label: string
  description: string
  /** A system-prompt section (order 50); absent: the default identity only. */
  persona?: string
  /** Allow-list of tool names (`*` matches any run of characters); absent: every tool. */
  tools?: string[]
  model?: string
  provider?: string
  reasoningEffort?: ReasoningEffort
}

export const PRESET_FILE_VERSION = 1

export const SHIPPED_PRESETS: readonly AgentPreset[] = [
  { id: 'standard', label: 'Standard', description: 'Every tool and the default persona.' },
  {
    id: 'code', label: 'Code', description: 'Every tool, with a persona for careful software engineering.',
    persona: 'Work as a careful software engineer in this repository. Read the code and tests around a change before making it, \
follow the conventions you find, keep each change small and focused, run the tests or the build after changing code, \
and report what you changed and how you verified it.',
  },
  {
    id: 'minimal', label: 'Minimal', description: 'Read and search only: nothing that writes files or runs commands.',
    persona: 'In this session you can only read and search files; you cannot change files or run commands. Answer from what you read.',
    tools: ['read', 'ls', 'glob', 'grep'],
  },
]

const PRESET_ID = /^[a-z0-9][a-z0-9_-]*$/

/** `$DSH_HOME/presets/<id>.yaml` (format v1). `id` defaults to the file name, `label` to the id. */
export const PresetFile = z.strictObject({
  version: z.literal(PRESET_FILE_VERSION),
  id: z.string().regex(PRESET_ID, 'lower-case letters, digits, "_" or "-"').optional(),
  label: z.string().min(1).optional(),
  description: z.string().default(''),
  persona: z.string().min(1).optional(),
  tools: z.array(z.string().min(1)).optional(),
  model: z.string().min(1).optional(),
  provider: z.string().min(1).optional(),
  reasoningEffort: z.enum(REASONING_EFFORTS).optional(),
})

/** Parses one preset file (pure). PRESET_INVALID names the file and the key, never the values. */
export function parsePreset(text: string, file: string): AgentPreset {
  const raw = parseHomeYaml(text, file, 'PRESET_INVALID')
  const parsed = PresetFile.safeParse(raw ?? {})
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw new DshError('PRESET_INVALID', `${file}: ${keyPath(issue.path)}: ${issue.message}`, { data: { file } })
  }
  const p = parsed.data
  const id = p.id ?? basename(file, extname(file))
  if (!PRESET_ID.test(id)) throw new DshError('PRESET_INVALID', `${file}: id: "${id}" must be lower-case letters, digits, "_" or "-" (set id: or rename the file)`)
  return {
    id, label: p.label ?? id, description: p.description,
    ...(p.persona ? { persona: p.persona.trim() } : {}),
    ...(p.tools ? { tools: p.tools } : {}),
    ...(p.model ? { model: p.model } : {}),
    ...(p.provider ? { provider: p.provider } : {}),
    ...(p.reasoningEffort ? { reasoningEffort: p.reasoningEffort } : {}),
  }
}

export interface PresetProblem { file: string; message: string }

/** Reads every `*.yaml` / `*.yml` in `dir` (sorted); a broken file becomes a problem, never a throw. */
export function loadPresetDir(dir: string): { presets: AgentPreset[]; problems: PresetProblem[] } {
  const presets: AgentPreset[] = []
  const problems: PresetProblem[] = []
  if (!existsSync(dir)) return { presets, problems }
  let names: string[]
  try {
    names = readdirSync(dir).filter((n) => /\.ya?ml$/.test(n)).sort()
  } catch (error) {
    return { presets, problems: [{ file: dir, message: `cannot list ${dir}: ${(error as Error).message}` }] }
  }
  for (const name of names) {
    const file = join(dir, name)
    try {
      presets.push(parsePreset(readFileSync(file, 'utf8'), file))
    } catch (error) {
      problems.push({ file, message: error instanceof DshError ? error.message : `${file}: ${(error as Error).message}` })
    }
  }
  return { presets, problems }
}

/** A name predicate for a tool allow-list; `*` matches any run of characters (pure). */
export function toolMatcher(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set(patterns.filter((p) => !p.includes('*')))
  const globs = patterns.filter((p) => p.includes('*')).map((p) => new RegExp(`^${p.split('*').map(escapeRegExp).join('.*')}$`))
  return (name) => exact.has(name) || globs.some((g) => g.test(name))
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
