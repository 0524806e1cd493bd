// The mounter under the bundled build (decision 0060): a row whose resolved file is one of
// the bundle's modules imports the bundled copy; any other row imports its own file, only
// after the bundled imports settled, and installs the shared-module hook first. The hook
// here is a pass-through file; the mapping itself is covered end to end in
// test/e2e/bundle-shared.test.ts.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { bundledUrl, compose, Mounter, useBundle } from '../src/index.js'

describe('Mounter from the bundle', () => {
  it('maps an in-tree row to its bundled file and imports an out-of-tree row after it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-bundled-'))
    const bundle = join(dir, 'bundle')
    mkdirSync(bundle)
    mkdirSync(join(dir, 'dist'))
    writeFileSync(join(dir, 'dist', 'row.mjs'), `export function apply(ctx) { ctx.provide('fromDist', 1) }\n`)
    writeFileSync(join(bundle, 'row.mjs'), `export function apply(ctx) { ctx.provide('fromBundle', 1) }\n`)
    writeFileSync(join(dir, 'outside.mjs'), `export function apply(ctx) { ctx.provide('outside', 1) }\n`)
    writeFileSync(join(bundle, 'hooks.mjs'), `export async function resolve(s, c, next) { return next(s, c) }\n`)
    useBundle({ dir: pathToFileURL(bundle).href + '/', modules: { '../dist/row.mjs': './row.mjs' }, shared: {}, hooks: './hooks.mjs' })
    expect(bundledUrl(join(dir, 'dist', 'row.mjs'))).toBe(pathToFileURL(join(bundle, 'row.mjs')).href)
    expect(bundledUrl(join(dir, 'outside.mjs'))).toBeUndefined()

    const order: string[] = []
    const importModule = async (url: string): Promise<unknown> => {
      order.push(`start ${url.slice(url.lastIndexOf('/') + 1)}`)
      const mod: unknown = await import(url)
      await new Promise((r) => setTimeout(r, 20))
      order.push(`end ${url.slice(url.lastIndexOf('/') + 1)}`)
      return mod
    }
    // the out-of-tree row comes first in the composition, yet is imported after the bundled one
    const rows = compose([{ file: join(dir, 'cordis.patch.yml'), text: '- insert:\n    - {id: outside, name: ./outside.mjs}\n    - {id: row, name: ./dist/row.mjs}\n' }]).rows
    const root = new Context()
    const mounter = new Mounter({ root, searchDirs: [dir], importModule })
    await mounter.apply(rows)
    expect(order).toEqual(['start row.mjs', 'end row.mjs', 'start outside.mjs', 'end outside.mjs'])
    expect([root.get('fromBundle'), root.get('fromDist', false), root.get('outside')]).toEqual([1, undefined, 1])
    expect(mounter.statuses().map((s) => [s.id, s.state])).toEqual([['outside', 'active'], ['row', 'active']])
  })
})
