// The ACP package's module graph: no import circle (type-only imports count too, since a
// type circle is a design circle), and the Bridge composer is imported by the server only.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src')

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [])
}

/** Relative imports and re-exports of a file, as absolute .ts paths. */
export function localImports(file: string, text: string): string[] {
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?(?:from\s*)?['"](\.{1,2}\/[^'"]+)['"]/g), ...text.matchAll(/import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g)]
  return specs.map((m) => resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')))
}

/** Every cycle found by a depth-first walk (each as a list of files, first = last). */
export function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (node: string) => {
    state.set(node, 'open')
    stack.push(node)
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next])
      else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(node, 'done')
  }
  for (const node of graph.keys()) if (!state.has(node)) visit(node)
  return found
}

const graph = new Map(sources(SRC).map((file) => [file, localImports(file, readFileSync(file, 'utf8'))]))
const name = (file: string) => relative(SRC, file)

describe('the ACP package module graph', () => {
  it('the walk sees a planted circle (the check can fail)', () => {
    expect(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).toEqual([['a', 'b', 'c', 'a']])
    expect(localImports('/x/y.ts', "import type { A } from './a.js'\nexport * from '../b.js'\nimport {\n  C,\n} from './c.js'\n")).toEqual(['/x/a.ts', '/b.ts', '/x/c.ts'])
  })

  it('has no import circle', () => {
    expect(graph.size).toBeGreaterThan(10)
    expect(cycles(graph).map((c) => c.map(name).join(' -> '))).toEqual([])
  })

  it('bridge.ts is imported by the server only', () => {
    const importers = [...graph].filter(([, deps]) => deps.includes(join(SRC, 'bridge.ts'))).map(([file]) => name(file))
    expect(importers).toEqual(['server.ts'])
  })
})
