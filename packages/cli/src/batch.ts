import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEFAULT_PROFILE, type Args } from './args.js'
import type { LaunchEnv } from './env.js'
import { run } from './run.js'

/** The patch that puts the batch surface in the place of the profile's one-shot surface row. */
const BATCH_PATCH = `# written by \`dsh batch\`: the batch surface replaces the headless one
- id: headless
  name: '@dsh/world-ssh/batch'
  group: surface
`

/**
 * `dsh batch …`: boots the profile (default headless) with its surface row replaced by
 * `@dsh/world-ssh/batch`, which reads the batch arguments from `ctx.launcher.argv`.
 */
export async function batch(args: Extract<Args, { type: 'batch' }>, launch: LaunchEnv): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-batch-'))
  const patch = join(dir, 'batch.patch.yml')
  writeFileSync(patch, BATCH_PATCH)
  try {
    return await run({ type: 'run', profile: args.profile ?? DEFAULT_PROFILE, patches: [patch], argv: args.argv }, launch)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
