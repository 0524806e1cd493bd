#!/usr/bin/env node
// Runs the built `dsh` (`npm run build`): the code-cached CommonJS form of the bundle
// (decision 0085); with DSH_DEBUG=1 the ES module bundle in packages/cli/dist/bundle
// (decision 0060), whose source maps map stack traces to the TypeScript sources.
const debug = process.env.DSH_DEBUG === '1'
if (debug) process.setSourceMapsEnabled(true)
const entry = new URL(debug ? '../dist/bundle/dsh.js' : '../dist/bundle/start.js', import.meta.url)
try {
  const loaded = await import(entry.href)
  if (!debug) loaded.start('dsh.js')
} catch (error) {
  if ((error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes(entry.pathname)) || error?.code === 'NOT_BUILT') {
    process.stderr.write('NOT_BUILT: dsh is not built\n  hint: run `npm run build` in the dsh checkout\n')
    process.exit(1)
  }
  throw error
}
