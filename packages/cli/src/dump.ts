import { resolve } from 'node:path'
import { composeProfile, dumpComposition, openProfile, patchCache } from '@dsh/boot'
import { DEFAULT_PROFILE, type Args } from './args.js'
import type { LaunchEnv } from './env.js'

/** `--dump-config` / `--dump-default-config`: compose, print, load no plugin. */
export async function dump(args: Extract<Args, { type: 'run' }>, launch: LaunchEnv): Promise<number> {
  const profile = openProfile(launch.home, args.profile ?? DEFAULT_PROFILE)
  for (const note of profile.notes) launch.io.stderr.write(`${note}\n`)
  const scope = args.dump === 'default' ? 'bundles' : 'all'
  const composition = composeProfile({
    profile, home: launch.home, dshRoot: launch.dshRoot, scope,
    overlays: args.patches.map((p) => resolve(launch.cwd, p)),
    cache: patchCache(launch.home, launch.version),
  })
  const title = `dsh ${launch.version}: ${scope === 'all' ? 'effective' : 'default (bundle layers only)'} rows of profile ${profile.name}`
  process.stdout.write(dumpComposition(composition, [title, 'one `- insert:` of every row; it loads over an empty tree (e.g. as the patch of a profile without bundles)']))
  return 0
}
