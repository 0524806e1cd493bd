import { Service, type Context } from '@deepseek-ai/cordis'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

declare module '@deepseek-ai/cordis' {
  interface Context { prompt: PromptService }
}

/** What a section sees when the system prompt is built. */
export interface PromptEnv {
  sessionId: string
  cwd: string
  /** The tool names offered on this request. */
  tools: readonly string[]
}

export interface PromptSection {
  id: string
  /** Lower comes first. Identity 0, guidance 100, environment 200, project 300, plugins 400+. */
  order: number
  render(env: PromptEnv): string | undefined
}

/** Reads a file's text once per (path, mtime, size); undefined when absent. */
export function cachedReader(): (path: string) => string | undefined {
  const cache = new Map<string, { key: string; text: string }>()
  return (path) => {
    let stat
    try {
      stat = statSync(path)
    } catch {
      cache.delete(path)
      return undefined
    }
    const key = `${stat.mtimeMs}:${stat.size}`
    const hit = cache.get(path)
    if (hit?.key === key) return hit.text
    const text = readFileSync(path, 'utf8')
    cache.set(path, { key, text })
    return text
  }
}

/**
 * `ctx.prompt`: the system prompt as ordered sections registered by plugins. Kept lean on
 * purpose: it and the tool schemas are paid for on every step.
 */
export class PromptService extends Service {
  private readonly sections = new Map<string, PromptSection>()

  constructor(ctx: Context) {
    super(ctx, 'prompt')
  }

  section(section: PromptSection): () => void {
    this.sections.set(section.id, section)
    return () => {
      if (this.sections.get(section.id) === section) this.sections.delete(section.id)
    }
  }

  build(env: PromptEnv): string {
    const parts: string[] = []
    for (const section of [...this.sections.values()].sort((a, b) => a.order - b.order)) {
      const text = section.render(env)?.trim()
      if (text) parts.push(text)
    }
    return parts.join('\n\n')
  }
}

export const IDENTITY = `You are dsh, a coding agent working in the user's workspace through tools. \
Work autonomously: inspect before you change, make the smallest correct change, verify it (run the tests or the command), \
and finish with a short answer that says what you did and what you found.`

export const GUIDANCE = `Guidelines:
- Use the tools to read, search, edit and run; do not guess file contents.
- Prefer the file tools over shell for reading and editing files. Quote paths with spaces.
- Commands run in a sandbox. If one is denied by the sandbox and it is really needed, retry it once with escalate: true and a justification.
- Keep answers concise; no filler.`

export function environmentSection(env: PromptEnv): string {
  return `Environment: workspace ${env.cwd}; platform ${process.platform}; shell bash.`
}

/** The workspace's AGENTS.md, as project instructions. */
export function projectSection(read: (path: string) => string | undefined) {
  return (env: PromptEnv): string | undefined => {
    const text = read(join(env.cwd, 'AGENTS.md'))
    return text?.trim() ? `Project instructions (AGENTS.md):\n${text.trim()}` : undefined
  }
}
