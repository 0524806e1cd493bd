// Builds the browser UI (ui/main.tsx + ui/style.css) into dist/ui: hashed, minified
// files with .br and .gz siblings, an index.html that loads them (no inline script),
// and manifest.json listing the assets. Called by the root scripts/build.mjs.
import { build } from 'esbuild'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { brotliCompressSync, gzipSync, constants } from 'node:zlib'

const here = new URL('.', import.meta.url).pathname

export default async function buildUi() {
  const out = join(here, 'dist', 'ui')
  mkdirSync(join(out, 'assets'), { recursive: true })
  const result = await build({
    entryPoints: { app: join(here, 'ui', 'main.tsx'), style: join(here, 'ui', 'style.css') },
    bundle: true, minify: true, format: 'esm', target: ['chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic', jsxImportSource: 'preact', outdir: join(out, 'assets'), entryNames: '[name]-[hash]',
    metafile: true, write: true, logLevel: 'warning', legalComments: 'none',
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  const files = Object.keys(result.metafile.outputs).map((p) => 'assets/' + basename(p))
  const js = files.find((f) => f.endsWith('.js'))
  const css = files.find((f) => f.endsWith('.css'))
  const html = readFileSync(join(here, 'ui', 'index.html'), 'utf8')
    .replace('%CSS%', css ? `<link rel="stylesheet" href="/${css}">` : '')
    .replace('%JS%', `<script type="module" src="/${js}"></script>`)
  writeFileSync(join(out, 'index.html'), html)
  for (const f of [...files, 'index.html']) {
    const body = readFileSync(join(out, f))
    writeFileSync(join(out, f + '.gz'), gzipSync(body, { level: 9 }))
    writeFileSync(join(out, f + '.br'), brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }))
  }
  writeFileSync(join(out, 'manifest.json'), JSON.stringify({ files }, null, 2))
}
