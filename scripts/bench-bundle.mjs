// A/B of the bundled entry points (decision 0060) against the per-file transpiled build, in
// one interleaved run: `node scripts/bench-bundle.mjs [--runs N]` after `npm run build`.
// The figures and the launch loop are scripts/startup-ab.mjs's (start → first model request,
// one-shot wall time, `--help` / `--version`, each in a fresh process with a warm temp
// DSH_HOME per variant). Prints medians, min–max and the bundle/per-file ratio.
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startupAB } from './startup-ab.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const runsArg = process.argv.indexOf('--runs')
const runs = Number(runsArg > 0 ? process.argv[runsArg + 1] : 15)
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`bench-bundle: --runs: expected an integer ≥ 1, got "${process.argv[runsArg + 1]}"`)
  process.exit(2)
}
await startupAB({
  runs,
  scratchPrefix: 'dsh-bench-bundle-',
  variants: {
    'per-file dist': join(root, 'packages/cli/dist/bin/dsh.js'),
    bundle: join(root, 'packages/cli/bin/dsh.js'),
  },
})
