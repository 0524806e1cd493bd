import { createRequire } from 'node:module'
import type { Document, LineCounter } from 'yaml'
import { DshError } from '@dsh/protocol'

type Yaml = typeof import('yaml')
let loaded: Yaml | undefined

/**
 * The `yaml` library, required on first use: a launch whose patch files are all in the
 * parse cache (see layers.ts) never loads it.
 */
export function yaml(): Yaml {
  return (loaded ??= createRequire(import.meta.url)('yaml') as Yaml)
}

/**
 * Parses YAML text into a Document with line positions. A syntax error becomes
 * `DshError(code)` whose message is `file:line:col: reason` — the reason is the
 * parser's first line only, so the offending source text (which may hold a secret)
 * is never echoed.
 */
export function parseYaml(text: string, file: string, code: string): { doc: Document; lines: LineCounter } {
  const { LineCounter, parseDocument } = yaml()
  const lines = new LineCounter()
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true })
  const error = doc.errors[0]
  if (error) {
    const pos = error.linePos?.[0]
    const where = pos ? `${file}:${pos.line}:${pos.col}` : file
    throw new DshError(code, `${where}: ${yamlReason(error.message)}`, {
      data: { file, ...(pos ? { line: pos.line, col: pos.col } : {}) },
      hint: 'fix the YAML syntax at that line',
    })
  }
  return { doc, lines }
}

/** The parser's message without its trailing position and source excerpt. */
export function yamlReason(message: string): string {
  const first = message.split('\n')[0] ?? message
  return first.replace(/ at line \d+, column \d+:?$/, '').replace(/:$/, '')
}

/** 1-based line of a node's start offset, or 0 when unknown. */
export function lineOf(lines: LineCounter, node: unknown): number {
  const range = (node as { range?: [number, number, number] } | null)?.range
  return range ? lines.linePos(range[0]).line : 0
}
