import type { ToolCallSpec } from '@dsh/testkit'
import type { World } from './escape-world.js'

/**
 * One attempt to get out: `bash` is a command the model runs, `file` the same attempt
 * through the file tools; either may be absent. `setup` prepares the workspace (as root,
 * chowned to the user after). `settleMs`: wait this long after the run before looking
 * (delayed effects). `race`: runs in the test process while dsh runs.
 */
export interface Attack {
  name: string
  category: 'lexical' | 'symlink' | 'proc' | 'hardlink' | 'mount' | 'env' | 'process' | 'socket' | 'store' | 'tmp'
  bash?: (w: World) => string
  file?: (w: World) => ToolCallSpec[]
  setup?: (w: World) => void
  settleMs?: number
  race?: (w: World, stop: { done: boolean }) => Promise<void>
  /**
   * Why this attempt holds even with no sandbox (danger-full-access), when it does: it needs
   * root, or dsh's own job control ends it, or the file tools replace a link by rename. Such
   * attempts still must hold under the sandbox; the negative control's 90% leaves them out.
   */
  holdsUnconfined?: string
  /** Commands the attempt needs on the machine (a missing one fails the case). */
  needs?: string[]
  /** 'shared': TMPDIR is the world's shared sticky temp folder, not the user's own. */
  tmp?: 'shared'
  /** What must have happened (besides nothing escaping), checked after the run: each string a failure. */
  check?: (w: World, modelSaw: string) => string[]
}
