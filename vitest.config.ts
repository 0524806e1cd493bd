import { defineConfig } from 'vitest/config'

// Unit tests import workspace packages from source (the `dsh-source` export
// condition); e2e tests spawn the built `dsh` binary and so need `npm run build`.
export default defineConfig({
  resolve: { conditions: ['dsh-source'] },
  ssr: { resolve: { conditions: ['dsh-source'], externalConditions: ['dsh-source'] } },
  test: {
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['packages/*/test/**/*.test.ts'], testTimeout: 20_000 },
      },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 60_000 },
      },
      {
        extends: true,
        // issue 12 item 10: crash, power-cut, disk-fault, hostile-input, escape and secret lanes (DSH_DEEP=1: 10x)
        test: { name: 'reliability', include: ['test/reliability/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000, maxConcurrency: 4 },
      },
    ],
    pool: 'forks',
  },
})
