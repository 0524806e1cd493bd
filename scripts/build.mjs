// Transpiles every workspace package's src/**/*.ts to dist/**/*.js (ESM, Node 20).
// Types are checked separately by `npm run check`; the build only emits runnable JS.
import { build } from 'esbuild'
import { readdirSync, existsSync, rmSync, statSync, chmodSync } from 'node:fs'
import { join } from 'node:path'

const root = new URL('..', import.meta.url).pathname
const dirs = ['packages', 'bundles'].flatMap((d) =>
  existsSync(join(root, d)) ? readdirSync(join(root, d)).map((p) => join(root, d, p)) : [])

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) walk(p, out)
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p)
  }
  return out
}

const started = Date.now()
let files = 0
await Promise.all(dirs.map(async (pkg) => {
  const src = join(pkg, 'src')
  if (!existsSync(src)) return
  const entryPoints = walk(src)
  files += entryPoints.length
  rmSync(join(pkg, 'dist'), { recursive: true, force: true })
  await build({
    entryPoints, outdir: join(pkg, 'dist'), outbase: src,
    format: 'esm', platform: 'node', target: 'node20', sourcemap: 'linked', logLevel: 'warning',
  })
  const bin = join(pkg, 'dist', 'bin')
  if (existsSync(bin)) for (const f of readdirSync(bin)) if (f.endsWith('.js')) chmodSync(join(bin, f), 0o755)
}))
// A package with its own build step (e.g. the web UI bundle) runs it after the transpile.
for (const pkg of dirs) {
  const own = join(pkg, 'build.mjs')
  if (existsSync(own)) await (await import(own)).default()
}
// The shipped entry points, bundled and code-split (decision 0060).
const bundled = await (await import('./bundle.mjs')).default()
console.log(`built ${files} files, bundled ${bundled.inputs} modules into ${bundled.files}, in ${Date.now() - started} ms`)
