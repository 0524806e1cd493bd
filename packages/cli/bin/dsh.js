#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8'
// Runs the built `dsh`: the bundle in packages/cli/dist/bundle (`npm run build`, decision 0060).
// With DSH_DEBUG=1 stack traces are mapped to the TypeScript sources through the bundle's source maps.
if (process.env.DSH_DEBUG === '1') process.setSourceMapsEnabled(true)
// The young generation keeps V8's initial 1 MB semi-spaces instead of growing them to 16 MB
// as a long session's survivors add up (~30 MB of RSS at step 1,000; decision 0088). V8 reads
// the growth factor at each growth, so it works set here; a semi-space flag the user gave wins.
if (!`${process.env.NODE_OPTIONS ?? ''} ${process.execArgv.join(' ')}`.includes('semi-space')) setFlagsFromString('--semi-space-growth-factor=1')
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
