#!/usr/bin/env node
// Runs the built `dsh`: the bundle in packages/cli/dist/bundle (`npm run build`, decision 0060).
// With DSH_DEBUG=1 stack traces are mapped to the TypeScript sources through the bundle's source maps.
if (process.env.DSH_DEBUG === '1') process.setSourceMapsEnabled(true)
const entry = new URL('../dist/bundle/dsh.js', import.meta.url)
try {
  await import(entry.href)
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes(entry.pathname)) {
    process.stderr.write('NOT_BUILT: dsh is not built\n  hint: run `npm run build` in the dsh checkout\n')
    process.exit(1)
  }
  throw error
}
