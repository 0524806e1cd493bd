import type { Json } from './json.js'
import type { CallCard } from './tools.js'

/** What the OS-level sandbox lets a spawned process do. */
export type SandboxMode = 'read-only' | 'workspace-write' | 'danger-full-access'
/** `ask`: what stays inside the sandbox runs; escalations (and policy plugins) ask. `never`: nothing asks. */
export type ApprovalPolicy = 'ask' | 'never'

/** A named {sandbox, approval} pair, chosen per session and logged (`permission/preset`). */
export interface PermissionPreset { id: string; sandbox: SandboxMode; approval: ApprovalPolicy; description: string }

export const PERMISSION_PRESETS: readonly PermissionPreset[] = [
  { id: 'read-only', sandbox: 'read-only', approval: 'ask', description: 'Read anything; write nothing (commands run in a read-only sandbox).' },
  { id: 'workspace-write', sandbox: 'workspace-write', approval: 'ask', description: 'Read anything; write in the workspace and the temp root; ask to go beyond.' },
  { id: 'danger-full-access', sandbox: 'danger-full-access', approval: 'never', description: 'No sandbox and no prompts. Use only in a disposable checkout or container.' },
]

/**
 * The execution policy of one call: the sandbox mode and the roots it applies to.
 * Paths are absolute and resolved (no symlinks).
 */
export interface ExecPolicy {
  mode: SandboxMode
  /** The session's workspace (cwd of commands, base of relative paths). */
  cwd: string
  /** Writable roots under workspace-write: the workspace, additional roots, the temp root. */
  writableRoots: string[]
  /** A temp directory shared by the session's processes (TMPDIR inside the sandbox). */
  tmpRoot: string
  network: boolean
}

export type ApprovalOutcome = 'allow-once' | 'allow-always' | 'reject' | 'cancelled'

/** A question put to whoever answers approvals on this surface. */
export interface ApprovalRequest {
  /** `escalation`: run outside the sandbox; `tool`: a policy asked about a call; `plan`: accept a plan. */
  kind: 'tool' | 'escalation' | 'plan'
  callId?: string
  tool: string
  title: string
  /** Why it is asked (the model's justification, the policy's reason). */
  reason?: string
  rawInput?: Json
  card?: CallCard
  /** What allow-always would cover: e.g. `bash:git status` (a command prefix) or `tool:write`. Shown to the user. */
  scope?: { key: string; label: string }
}
