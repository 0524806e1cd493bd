// Start-up A/B of two built dsh checkouts in one interleaved run (decisions 0085, 0095):
//   node scripts/bench-startup.mjs --base <other checkout> [--runs N]
// (e.g. a copy of this checkout made before a change, built). The figures and the launch
// loop are scripts/startup-ab.mjs's: start → first model request of a 3-tool headless
// one-shot (plain, and with one out-of-tree row in the profile), the one-shot's wall time
// sandboxed and unsandboxed, and the wall time of `--help` / `--version`, each in a fresh
// process against the testkit's scripted mock model with a warm temp DSH_HOME per checkout.
// Without --base it measures this checkout alone. Prints medians, min–max and this/base.
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startupAB } from './startup-ab.mjs'
import { flag } from './bench-args.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const arg = (name) => flag(name, undefined)
const runs = Number(arg('--runs') ?? 12)
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`bench-startup: --runs: expected an integer ≥ 1, got "${arg('--runs')}"`)
  process.exit(2)
}
const base = arg('--base')
await startupAB({
  runs,
  variants: {
    ...(base ? { base: join(resolve(base), 'packages/cli/bin/dsh.js') } : {}),
    this: join(root, 'packages/cli/bin/dsh.js'),
  },
})
