// The CommonJS form of the bundle (decision 0085), written after the ES module bundle: every
// bundle file but the resolve hook (an ES module the loader thread runs) is transformed to CommonJS
// (`import` → `require`, `import()` → a promise of `require`, `import.meta.url` → the
// loader's `__dshUrl`) into a sibling directory at the same depth, so the bundle's
// package-relative URLs still find the same files. Also written there: an ES module facade
// per shared specifier (what an out-of-tree plugin's `import '@dsh/core'` resolves to: the
// named exports of the tree's own instance, through the loader), and build.json with the
// build id (SHA-256 of every file) the code cache is keyed by.
import { build, transform } from 'esbuild'
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, join, relative } from 'node:path'

const IDENT = /^[A-Za-z_$][\w$]*$/
const KEEP_ESM = new Set(['share-hooks.js'])

/**
 * outdir: the ES module bundle; cjsdir: where to write; outputs: metafile outputs (keys relative
 * to root); shared: specifier → bundle file name (`./core.js`); banner: the ESM banner to strip;
 * loader: the source of loader.cjs.
 */
export async function writeCommonJs({ root, outdir, cjsdir, outputs, shared, banner, loader }) {
  rmSync(cjsdir, { recursive: true, force: true })
  mkdirSync(join(cjsdir, 'shared'), { recursive: true })
  const files = Object.keys(outputs).filter((f) => f.endsWith('.js')).map((f) => basename(f)).filter((f) => !KEEP_ESM.has(f)).sort()
  const id = createHash('sha256')
  await Promise.all(files.map(async (name) => {
    let code = readFileSync(join(outdir, name), 'utf8')
    if (code.startsWith(banner)) code = code.slice(banner.length)
    code = code.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n')
    const result = await transform(code, {
      format: 'cjs', loader: 'js', platform: 'node', target: 'node20', sourcefile: name,
      supported: { 'dynamic-import': false }, define: { 'import.meta.url': '__dshUrl' },
      minifyWhitespace: true, minifySyntax: true, logLevel: 'silent',
    })
    if (result.warnings.length) throw new Error(`${name}: ${result.warnings.map((w) => w.text).join('; ')}`)
    writeFileSync(join(cjsdir, name), result.code)
  }))
  for (const name of files) id.update(`${name}\0`).update(readFileSync(join(cjsdir, name))).update('\0')
  const facades = {}
  for (const [specifier, file] of Object.entries(shared)) {
    const name = file.slice(2)
    const output = outputs[relative(root, join(outdir, name))]
    if (!output) throw new Error(`shared ${specifier}: no bundle file ${name}`)
    const names = output.exports.filter((e) => e !== 'default')
    for (const e of names) if (!IDENT.test(e)) throw new Error(`${name}: export ${JSON.stringify(e)} is not an identifier`)
    const facade = `shared/${name.replace(/\.js$/, '.mjs')}`
    writeFileSync(join(cjsdir, facade), [
      `// ${specifier} for out-of-tree modules: the running tree's own instance of ${name}`,
      `const m = globalThis[Symbol.for('dsh.bundleRequire')](${JSON.stringify(file)})`,
      ...(names.length ? [`export const { ${names.join(', ')} } = m`] : []),
      ...(output.exports.includes('default') ? ['export default m.default'] : []),
      '',
    ].join('\n'))
    facades[specifier] = facade
    id.update(`${facade}\0${readFileSync(join(cjsdir, facade))}\0`)
  }
  writeFileSync(join(cjsdir, 'package.json'), '{ "type": "commonjs" }\n')
  // the loader the bin scripts require: start.ts alone, as CommonJS (it imports only Node built-ins)
  await build({ entryPoints: [loader], outfile: join(cjsdir, 'loader.cjs'), bundle: true, format: 'cjs', platform: 'node', target: 'node20', logLevel: 'warning', minifyWhitespace: true, minifySyntax: true })
  writeFileSync(join(cjsdir, 'build.json'), `${JSON.stringify({ id: id.digest('hex'), shared: facades }, null, 1)}\n`)
  return files.length
}
