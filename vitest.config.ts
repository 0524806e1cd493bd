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
    ],
    pool: 'forks',
  },
})
