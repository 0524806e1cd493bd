#!/usr/bin/env node
// Runs the built `dsh-acp` (packages/cli/dist, produced by `npm run build`).
const entry = new URL('../dist/bin/dsh-acp.js', import.meta.url)
try {
  await import(entry.href)
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes(entry.pathname)) {
    process.stderr.write('NOT_BUILT: dsh-acp is not built\n  hint: run `npm run build` in the dsh checkout\n')
    process.exit(1)
  }
  throw error
}
