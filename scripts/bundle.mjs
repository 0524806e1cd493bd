// Bundles dsh's entry points into packages/cli/dist/bundle (decision 0060), after the
// per-file transpile. Entries: `dsh`, `dsh-acp`, every in-tree module a row or an out-of-tree
// plugin can name (each `@dsh/<pkg>` export, `@dsh/<pkg>/<plugin>` for src/plugins/*.ts),
// `@deepseek-ai/cordis`, and the resolve hook; code-split, so a row's module is its own file,
// loaded only when the tree mounts it, and every module exists once. The `dsh` entry
// registers the index (transpiled path → bundle file) the mounter maps resolved rows with.
import { build } from 'esbuild'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { basename, dirname, join, relative } from 'node:path'
import { writeCommonJs } from './bundle-cjs.mjs'

const root = new URL('..', import.meta.url).pathname
const outdir = join(root, 'packages/cli/dist/bundle')
/** Not part of the shipped tree (test support); its rows load as out-of-tree modules. */
const SKIP = new Set(['@dsh/testkit', '@dsh/cli'])
/** Loaded with createRequire on first use (0051), native, or optional: left to node_modules. */
const EXTERNAL = ['ssh2', 'cpu-features', '@lydell/node-pty', 'better-sqlite3']

const BANNER = "import { createRequire as __dshCreateRequire } from 'node:module'; const require = __dshCreateRequire(import.meta.url);"
const rel = (file) => relative(outdir, file).split('\\').join('/')
const packages = readdirSync(join(root, 'packages')).map((d) => join(root, 'packages', d))
  .filter((d) => existsSync(join(d, 'package.json')))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
  .filter(({ manifest }) => !SKIP.has(manifest.name))

// specifier → { source, dist, out }
const modules = []
for (const { dir, manifest } of packages) {
  const short = manifest.name.replace(/^@dsh\//, '')
  for (const [key, target] of Object.entries(manifest.exports ?? {})) {
    if (typeof target !== 'object' || !target['dsh-source']) continue
    const subs = key.includes('*')
      ? listStem(join(dir, dirname(target['dsh-source'])), '.ts').map((stem) => key.replace('*', stem))
      : [key]
    for (const sub of subs) {
      const stem = key.includes('*') ? sub.slice(key.indexOf('*')) : undefined
      const pick = (t) => join(dir, stem === undefined ? t : t.replace('*', stem))
      modules.push({
        specifier: sub === '.' ? manifest.name : `${manifest.name}/${sub.slice(2)}`,
        source: pick(target['dsh-source']),
        dist: pick(target.default),
        out: sub === '.' ? short : `${short}.${sub.slice(2).replaceAll("/", ".")}`,
      })
    }
  }
}

function listStem(dir, ext) {
  if (!existsSync(dir)) return []
  return readdirSync(dir).filter((f) => f.endsWith(ext) && !f.endsWith('.d.ts')).map((f) => basename(f, ext))
}

const cli = join(root, 'packages/cli/src')
const index = {
  modules: Object.fromEntries(modules.map((m) => [rel(m.dist), `./${m.out}.js`])),
  shared: {
    ...Object.fromEntries(modules.map((m) => [m.specifier, `./${m.out}.js`])),
    '@deepseek-ai/cordis': './cordis.js',
  },
  hooks: './share-hooks.js',
}

/**
 * Virtual entries, and `import.meta.url` in a bundled module rewritten to the URL of the
 * transpiled file it replaces (so package-relative reads — package.json, the web UI's
 * assets, createRequire — find the same files as the per-file build).
 */
const dshPlugin = {
  name: 'dsh-bundle',
  setup(b) {
    b.onResolve({ filter: /^dsh-bundle:/ }, (args) => ({ path: args.path.slice('dsh-bundle:'.length), namespace: 'dsh-bundle' }))
    // zod's `locales` namespace (64 languages, ~40 % of zod's source) holds only `en`, the one
    // zod installs itself; nothing in the tree calls `z.config(z.locales.xx())` (0095)
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => (/[\\/]node_modules[\\/]zod[\\/]v4[\\/](classic|core)[\\/]/.test(args.importer)
      ? { path: 'zod-locales', namespace: 'dsh-bundle', pluginData: { en: join(dirname(args.importer), '../locales/en.js') } }
      : undefined))
    b.onLoad({ filter: /.*/, namespace: 'dsh-bundle' }, (args) => {
      if (args.path === 'register') {
        return {
          resolveDir: root, loader: 'js',
          contents: `import { useBundle } from ${JSON.stringify(join(root, 'packages/boot/src/bundled.ts'))}\n` +
            // under the CommonJS loader (0085) its host adds load/importModule and replaces shared/hooks
            `useBundle({ dir: new URL('./', import.meta.url).href, ...${JSON.stringify(index)}, ...(typeof __dshHost === 'object' ? __dshHost : {}) })\n`,
        }
      }
      if (args.path === 'dsh' || args.path === 'dsh-acp') return { resolveDir: root, loader: 'js', contents: `import 'dsh-bundle:register'\nimport ${JSON.stringify(join(cli, `bin/${args.path}.ts`))}\n` }
      if (args.path === 'zod-locales') return { resolveDir: root, loader: 'js', contents: `export { default as en } from ${JSON.stringify(args.pluginData.en)}\n` }
      if (args.path === 'cordis') return { resolveDir: root, loader: 'js', contents: `export * from '@deepseek-ai/cordis'\n` }
      return undefined
    })
    b.onLoad({ filter: /\/packages\/[^/]+\/src\/.*\.ts$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8')
      if (!text.includes('import.meta.url') || args.path.includes('/packages/cli/src/bin/')) return undefined
      const transpiled = args.path.replace(/\/src\/(.*)\.ts$/, '/dist/$1.js')
      return { loader: 'ts', contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel(transpiled))}, import.meta.url).href`) }
    })
  },
}

export default async function bundle() {
  rmSync(outdir, { recursive: true, force: true })
  const entryPoints = {
    dsh: 'dsh-bundle:dsh',
    'dsh-acp': 'dsh-bundle:dsh-acp',
    cordis: 'dsh-bundle:cordis',
    'share-hooks': join(root, 'packages/boot/src/share-hooks.ts'),
    ...Object.fromEntries(modules.map((m) => [m.out, m.source])),
  }
  const result = await build({
    entryPoints, outdir, bundle: true, splitting: true, format: 'esm', platform: 'node', target: 'node20',
    conditions: ['dsh-source'], external: EXTERNAL, sourcemap: 'linked', chunkNames: 'chunk-[hash]',
    metafile: true, logLevel: 'warning', plugins: [dshPlugin],
    // less source to compile at start-up (0060: ~0.86× the import time); names are kept
    minifyWhitespace: true, minifySyntax: true,
    // bundled CommonJS dependencies call require() for Node built-ins
    banner: { js: BANNER }, absWorkingDir: root,
  })
  // the form the bin scripts run, through the V8 code cache (0085)
  await writeCommonJs({ root, outdir, cjsdir: join(root, 'packages/cli/dist/bundle-cjs'), outputs: result.metafile.outputs, shared: index.shared, banner: `${BANNER}\n`, loader: join(cli, 'bin/start.ts') })
  return { files: Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js')).length, inputs: Object.keys(result.metafile.inputs).length }
}
