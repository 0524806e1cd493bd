#!/usr/bin/env node
// Runs the built `dsh-acp` (`npm run build`): the code-cached CommonJS form of the bundle
// (decision 0085); with DSH_DEBUG=1 the ES module bundle in packages/cli/dist/bundle
// (decision 0060), whose source maps map stack traces to the TypeScript sources. The loader
// bounds V8's young generation (0088) in both cases.
import { createRequire } from 'node:module'

const debug = process.env.DSH_DEBUG === '1'
const loader = '../dist/bundle-cjs/loader.cjs'
const entry = debug ? '../dist/bundle/dsh-acp.js' : loader
try {
  if (debug) {
    createRequire(import.meta.url)(loader).boundYoungGeneration()
    process.setSourceMapsEnabled(true)
    await import(entry)
  } else {
    createRequire(import.meta.url)(loader).start('dsh-acp.js', import.meta.url)
  }
} catch (error) {
  if ((/^(ERR_)?MODULE_NOT_FOUND$/.test(error?.code) && [entry, loader].some((e) => String(error.message).includes(e.slice(3)))) || error?.code === 'NOT_BUILT') {
    process.stderr.write('NOT_BUILT: dsh-acp is not built\n  hint: run `npm run build` in the dsh checkout\n')
    process.exit(1)
  }
  throw error
}
