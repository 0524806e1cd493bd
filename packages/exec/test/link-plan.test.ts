import { createHash } from 'node:crypto'
import { linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { outsideLinks, scanLinkedFiles } from '../src/sandbox/hardlinks.js'
import { MAX_LINK_MOUNTS, planLinkMounts } from '../src/sandbox/link-plan.js'
import { cleanupDirs, execTree, policyFor, tempDir } from './helpers.js'

// 0099: many outside hard links (a pnpm node_modules) cost one bwrap bind each, quadratic.
let root: Context
afterAll(cleanupDirs)
beforeAll(async () => {
  root = await execTree()
})

const PACKAGES = 250
const FILES = 10 // per package: 2,500 links, above the old cap of 2,000

/** A pnpm-like workspace: every package file a hard link into a store outside it. */
function pnpmWorkspace() {
  const ws = tempDir('pnpm-ws')
  const store = tempDir('pnpm-store')
  const nm = path.join(ws, 'node_modules')
  const virtual = path.join(nm, '.pnpm')
  for (let p = 0; p < PACKAGES; p++) {
    const pkg = path.join(virtual, `pkg${p}@1.0.0`, 'node_modules', `pkg${p}`)
    mkdirSync(path.join(pkg, 'lib'), { recursive: true })
    mkdirSync(path.join(store, `pkg${p}`), { recursive: true })
    for (let f = 0; f < FILES; f++) {
      const rel = f < 3 ? `f${f}.js` : path.join('lib', `f${f}.js`)
      const inStore = path.join(store, `pkg${p}`, `${f}`)
      writeFileSync(inStore, `store ${p} ${f}\n`)
      linkSync(inStore, path.join(pkg, rel))
    }
    // a dependency of the package: a symlink in a scope directory of symlinks
    mkdirSync(path.join(virtual, `pkg${p}@1.0.0`, 'node_modules', '@types'))
    symlinkSync(`../../../pkg0@1.0.0/node_modules/pkg0`, path.join(virtual, `pkg${p}@1.0.0`, 'node_modules', '@types', 'dep'))
    symlinkSync(`.pnpm/pkg${p}@1.0.0/node_modules/pkg${p}`, path.join(nm, `pkg${p}`))
  }
  writeFileSync(path.join(virtual, 'lock.yaml'), 'lockfileVersion: 9\n')
  writeFileSync(path.join(nm, '.modules.yaml'), 'layout: 5\n')
  mkdirSync(path.join(ws, 'src'))
  writeFileSync(path.join(ws, 'src', 'index.ts'), 'export {}\n')
  return { ws, store, tmp: tempDir('pnpm-tmp') }
}

function storeHash(store: string): string {
  const h = createHash('sha256')
  for (const dir of readdirSync(store).sort()) for (const f of readdirSync(path.join(store, dir)).sort()) h.update(readFileSync(path.join(store, dir, f)))
  return h.digest('hex')
}

async function sh(ws: string, tmp: string, script: string) {
  let output = ''
  const argv = await root.sandbox.wrap(['bash', '-c', script], policyFor('workspace-write', ws, tmp))
  const result = await root.subprocess.run(argv, { cwd: ws, onData: (c) => { output += c.toString() } })
  return { code: result.exitCode, output }
}

describe('many hard links out of the workspace (a pnpm node_modules)', () => {
  it('2,500 links run confined in a few mounts: no write reaches the store; the lock file, new caches and sources stay writable', async () => {
    const { ws, store, tmp } = pnpmWorkspace()
    const before = storeHash(store)
    const baseline = await sh(tempDir('plain-ws'), tmp, 'wc -l < /proc/self/mountinfo')
    const r = await sh(ws, tmp, [
      'wc -l < /proc/self/mountinfo',
      // every link: append, truncate, replace in place; report each that worked
      'find node_modules/.pnpm -type f -links +1 | while read -r f; do { echo x >> "$f"; } 2>/dev/null && echo "WROTE $f"; { : > "$f"; } 2>/dev/null && echo "TRUNCATED $f"; done',
      'echo "# ok" >> node_modules/.pnpm/lock.yaml && echo lock-ok',
      'echo "x: 1" >> node_modules/.modules.yaml && echo modules-ok',
      'mkdir -p node_modules/.vite/deps && echo c > node_modules/.vite/deps/chunk.js && echo cache-ok',
      'echo "// edited" >> src/index.ts && echo src-ok',
      'touch node_modules/.pnpm/pkg0@1.0.0/node_modules/pkg0/new.js 2>/dev/null || echo frozen-ok',
      'cat node_modules/pkg7/lib/f5.js',
    ].join('\n'))
    expect(r.output).not.toMatch(/WROTE|TRUNCATED/)
    const lines = r.output.trim().split('\n')
    // the mounts the links cost, counted inside the sandbox
    expect(Number(lines[0]) - Number(baseline.output.trim())).toBeGreaterThan(0)
    expect(Number(lines[0]) - Number(baseline.output.trim())).toBeLessThanOrEqual(MAX_LINK_MOUNTS)
    expect(lines.slice(1)).toEqual(['lock-ok', 'modules-ok', 'cache-ok', 'src-ok', 'frozen-ok', 'store 7 5'])
    expect(storeHash(store)).toBe(before)
    expect(readFileSync(path.join(ws, 'node_modules', '.pnpm', 'lock.yaml'), 'utf8')).toBe('lockfileVersion: 9\n# ok\n')
    expect(readFileSync(path.join(ws, 'node_modules', '.vite', 'deps', 'chunk.js'), 'utf8')).toBe('c\n')
    expect(readFileSync(path.join(ws, 'src', 'index.ts'), 'utf8')).toBe('export {}\n// edited\n')
  })
})

describe('a secret linked into a directory bound read-only whole', () => {
  it('stays masked (unreadable inside) and unwritable; the store is untouched', async () => {
    const { ws, store, tmp } = pnpmWorkspace()
    const before = storeHash(store)
    const secret = path.join(tempDir('secret-home'), 'key.txt')
    writeFileSync(secret, 'sk-canary\n')
    const link = path.join(ws, 'node_modules', '.pnpm', 'pkg3@1.0.0', 'node_modules', 'pkg3', 'lib', 'key.js')
    linkSync(secret, link)
    const tree = await execTree({ sandbox: { maskFiles: [secret] } })
    let output = ''
    const argv = await tree.sandbox.wrap(['bash', '-c', 'cat node_modules/pkg3/lib/key.js; echo "[read]"; echo x >> node_modules/pkg3/lib/key.js 2>/dev/null && echo WROTE; echo x >> node_modules/pkg3/lib/f5.js 2>/dev/null && echo WROTE; true'], policyFor('workspace-write', ws, tmp))
    expect(argv.filter((a) => a === '--ro-bind' || a === '--bind').length).toBeLessThanOrEqual(MAX_LINK_MOUNTS + 2)
    await tree.subprocess.run(argv, { cwd: ws, onData: (c) => { output += c.toString() } })
    expect(output).toContain('[read]')
    expect(output).not.toMatch(/sk-canary|WROTE/)
    expect(readFileSync(secret, 'utf8')).toBe('sk-canary\n')
    expect(storeHash(store)).toBe(before)
  })
})

describe('planLinkMounts', () => {
  /** `n` directories under `ws/sub`, each with `links` outside links and `extra` plain files beside them. */
  function layout(n: number, extra: number, links = 1) {
    const ws = tempDir('plan-ws')
    const out = tempDir('plan-out')
    for (let i = 0; i < n; i++) {
      const dir = path.join(ws, 'sub', `d${i}`)
      mkdirSync(dir, { recursive: true })
      for (let l = 0; l < links; l++) {
        writeFileSync(path.join(out, `o${i}-${l}`), 'o')
        linkSync(path.join(out, `o${i}-${l}`), path.join(dir, l ? `link${l}` : 'link'))
      }
      for (let e = 0; e < extra; e++) writeFileSync(path.join(dir, `plain${e}`), 'p')
    }
    return ws
  }
  const plan = async (ws: string, roots: string[] = [ws], limit?: number) =>
    planLinkMounts(outsideLinks([await scanLinkedFiles(ws)]), roots, limit === undefined ? {} : { limit })
  const rel = (ws: string, ps: string[]) => ps.map((p) => path.relative(ws, p)).sort()

  it('up to the limit: one read-only bind per link and nothing else made read-only', async () => {
    const ws = layout(3, 1)
    const p = await plan(ws)
    expect({ readOnly: rel(ws, p.readOnly), writable: p.writable }).toEqual({ readOnly: ['sub/d0/link', 'sub/d1/link', 'sub/d2/link'], writable: [] })
  })

  it('above it: directories of links are bound whole, their plain files bound writable again', async () => {
    const ws = layout(3, 0)
    writeFileSync(path.join(ws, 'sub', 'README'), 'r')
    const p = await plan(ws, [ws], 2)
    expect({ readOnly: rel(ws, p.readOnly), writable: rel(ws, p.writable) }).toEqual({ readOnly: ['sub'], writable: ['sub/README'] })
  })

  it('links scattered beside plain files that no directory bind can cover are SANDBOX_HARDLINKS with the count and a way out', async () => {
    const ws = layout(MAX_LINK_MOUNTS + 1, 1)
    await expect(plan(ws)).rejects.toMatchObject({
      code: 'SANDBOX_HARDLINKS',
      message: expect.stringContaining(`takes ${MAX_LINK_MOUNTS + 1} mounts even with whole directories bound read-only, more than ${MAX_LINK_MOUNTS}`),
      hint: expect.stringContaining('--no-hardlinks'),
    })
  })

  it('a directory holding another writable root is never bound read-only (it would cover that root\'s binds)', async () => {
    const ws = layout(3, 0, 2)
    const inner = path.join(ws, 'sub', 'inner')
    mkdirSync(inner)
    expect(rel(ws, (await plan(ws, [ws], 3)).readOnly)).toEqual(['sub'])
    const p = await plan(ws, [ws, inner], 3)
    expect({ readOnly: rel(ws, p.readOnly), writable: p.writable }).toEqual({ readOnly: ['sub/d0', 'sub/d1', 'sub/d2'], writable: [] })
  })

  it('a file with other links not known to be inside stays read-only in a read-only directory', async () => {
    const ws = layout(3, 0)
    const stray = tempDir('stray')
    writeFileSync(path.join(stray, 's'), 's')
    linkSync(path.join(stray, 's'), path.join(ws, 'sub', 'unknown'))
    const outside = outsideLinks([await scanLinkedFiles(ws)]).filter((f) => !f.path.endsWith('unknown'))
    const p = await planLinkMounts(outside, [ws], { limit: 2 })
    expect({ readOnly: rel(ws, p.readOnly), writable: p.writable }).toEqual({ readOnly: ['sub'], writable: [] })
  })
})
