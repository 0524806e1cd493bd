#!/usr/bin/env node
// Runs the built `dsh` (`npm run build`): the code-cached CommonJS form of the bundle
// (decision 0085); with DSH_DEBUG=1 the ES module bundle in packages/cli/dist/bundle
// (decision 0060), whose source maps map stack traces to the TypeScript sources.
import { createRequire } from 'node:module'
import { setFlagsFromString } from 'node:v8'

// The young generation keeps V8's initial 1 MB semi-spaces instead of growing them to 16 MB
// as a long session's survivors add up (~30 MB of RSS at step 1,000; decision 0088). V8 reads
// the growth factor at each growth, so it works set here; a semi-space flag the user gave wins.
if (!`${process.env.NODE_OPTIONS ?? ''} ${process.execArgv.join(' ')}`.includes('semi-space')) setFlagsFromString('--semi-space-growth-factor=1')
const debug = process.env.DSH_DEBUG === '1'
if (debug) process.setSourceMapsEnabled(true)
// a bare --help/--version runs three small files: the ES module bundle is cheaper than the loader
const esm = debug || (process.argv.length === 3 && ['--help', '-h', '--version', '-v'].includes(process.argv[2]))
const entry = esm ? '../dist/bundle/dsh.js' : '../dist/bundle-cjs/loader.cjs'
try {
  if (esm) await import(entry)
  else createRequire(import.meta.url)(entry).start('dsh.js', import.meta.url)
} catch (error) {
  if ((/^(ERR_)?MODULE_NOT_FOUND$/.test(error?.code) && String(error.message).includes(entry.slice(3))) || error?.code === 'NOT_BUILT') {
    process.stderr.write('NOT_BUILT: dsh is not built\n  hint: run `npm run build` in the dsh checkout\n')
    process.exit(1)
  }
  throw error
}
