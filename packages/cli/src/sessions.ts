import { realpathSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { composeProfile, openProfile, patchCache } from '@dsh/boot'
import type { SessionInfo } from '@dsh/core'
import { JsonlSessionStore } from '@dsh/persistence'
import { DEFAULT_PROFILE, type Args } from './args.js'
import type { LaunchEnv } from './env.js'
import { installLogExporter } from './output.js'

/** One listed session, as `--json` prints it. */
export interface SessionRow {
  id: string
  title: string | null
  workspace: string
  /** ISO 8601, UTC: the last durable write. */
  updated: string
  events: number
}

export const toRow = (info: SessionInfo): SessionRow => ({
  id: info.id, title: info.title ?? null, workspace: info.cwd, updated: new Date(info.updatedAt).toISOString(), events: info.events,
})

/** The text listing (pure): a header and one line per session, columns padded; titles last. */
export function formatSessions(rows: readonly SessionRow[]): string {
  const table = [['ID', 'UPDATED (UTC)', 'WORKSPACE', 'TITLE'], ...rows.map((r) => [r.id, r.updated.slice(0, 19).replace('T', ' '), r.workspace, r.title ?? ''])]
  const widths = [0, 1, 2].map((c) => Math.max(...table.map((line) => line[c]!.length)))
  return table.map((line) => line.map((cell, c) => (c < 3 ? cell.padEnd(widths[c]!) : cell)).join('  ').trimEnd()).join('\n') + '\n'
}

/**
 * The sessions directory of a profile: the `dir` of its `@dsh/persistence/jsonl` row when
 * configured (resolved like the plugin does), else `$DSH_HOME/sessions`.
 */
function sessionsDir(args: Extract<Args, { type: 'sessions' }>, launch: LaunchEnv): string {
  const profile = openProfile(launch.home, args.profile ?? DEFAULT_PROFILE)
  for (const note of profile.notes) launch.io.stderr.write(`${note}\n`)
  const { rows } = composeProfile({ profile, home: launch.home, dshRoot: launch.dshRoot, overlays: [], cache: patchCache(launch.home, launch.version) })
  const store = rows.find(({ row }) => row.name === '@dsh/persistence/jsonl' && !row.disabled)?.row
  const dir = (store?.config as { dir?: unknown } | undefined)?.dir
  return typeof dir === 'string' && dir ? resolve(launch.cwd, dir) : join(launch.home, 'sessions')
}

/** A workspace filter as sessions record it (real path; a deleted directory as given). */
function workspaceOf(dir: string, cwd: string): string {
  const path = resolve(cwd, dir)
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}

/** `dsh sessions [--json] [--workspace DIR]`: id, title, workspace, updated; newest first. Loads no plugin. */
export async function listSessions(args: Extract<Args, { type: 'sessions' }>, launch: LaunchEnv): Promise<number> {
  const dir = sessionsDir(args, launch)
  const root = new Context()
  installLogExporter(root, launch.io)
  const store = new JsonlSessionStore(root, { dir })
  const filter = args.workspace !== undefined ? { cwd: workspaceOf(args.workspace, launch.cwd) } : undefined
  const rows = (await store.list(filter)).map(toRow)
  if (args.json) process.stdout.write(`${JSON.stringify(rows)}\n`)
  else if (!rows.length) process.stdout.write(`No sessions in ${dir}${filter ? ` for workspace ${filter.cwd}` : ''}.\n`)
  else process.stdout.write(formatSessions(rows))
  return 0
}
