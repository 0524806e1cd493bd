import { closeSync, openSync } from 'node:fs'
import { resolve } from 'node:path'
import { isatty } from 'node:tty'
import { Context } from '@deepseek-ai/cordis'
import { composeProfile, homePatchFile, interpretSchemas, Launcher, Mounter, openProfile, patchCache, searchDirs, type ComposedRow, type LayerOptions, signalExitCode, type LauncherSignal, type RowStatus } from '@dsh/boot'
import { isDshError } from '@dsh/protocol'
import { DEFAULT_PROFILE, type Args } from './args.js'
import type { LaunchEnv } from './env.js'
import { installLogExporter, printError, rowReport } from './output.js'
import { watchPatches } from './reload.js'
import { TreeReporter } from './tree-report.js'

const SHUTDOWN_WAIT_MS = 2000

/**
 * Boots a profile: compose the layers, provide `ctx.launcher`, mount every row,
 * report the rows that did not start, then either exit (nothing holds the
 * process: 0 when every row is healthy, else 1) or live until a surface calls
 * `launcher.exit()`. While alive, edits of the profile and home patch files are
 * applied as a difference. Returns the exit code after unwinding the tree.
 */
export async function run(args: Extract<Args, { type: 'run' }>, launch: LaunchEnv): Promise<number> {
  const { io } = launch
  interpretSchemas()
  const profile = openProfile(launch.home, args.profile ?? DEFAULT_PROFILE)
  for (const note of profile.notes) io.stderr.write(`${note}\n`)
  const layerOptions: LayerOptions = {
    profile, home: launch.home, dshRoot: launch.dshRoot,
    overlays: args.patches.map((p) => resolve(launch.cwd, p)),
    cache: patchCache(launch.home, launch.version),
  }
  const composition = composeProfile(layerOptions)

  const root = new Context()
  installLogExporter(root, io)
  const launcher = new Launcher(root, {
    argv: args.argv, home: launch.home, profile: profile.name, cwd: launch.cwd, env: launch.env,
    version: launch.version, stdin: () => process.stdin, stdout: process.stdout, stderr: process.stderr,
  })
  const mounter = new Mounter({ root, searchDirs: searchDirs(profile, launch.dshRoot) })
  const reporter = new TreeReporter(launch.env.DSH_TREE_REPORT, root, mounter, profile.name)

  let signals = 0
  const onSignal = (signal: LauncherSignal) => {
    signals++
    const code = signalExitCode(signal)
    if (signals > 1 || launcher.holds === 0) return launcher.exit(code)
    io.stderr.write(`\n${signal}: asking the surface to stop (send it again to exit now)\n`)
    try {
      root.emit('launcher/signal', signal)
    } catch (error) {
      printError(io, error)
      launcher.exit(code)
    }
  }
  const sigint = () => onSignal('SIGINT')
  const sigterm = () => onSignal('SIGTERM')
  // A closed terminal hangs up (SIGHUP) and answers every later write with EIO: an 'error'
  // event nobody handles would crash dsh before the cancel is logged, and Node 20 aborts at
  // exit when it cannot restore the terminal's modes (tcsetattr: EIO). So the descriptors
  // that were the terminal become /dev/null at the hang-up (Node skips a descriptor that is
  // no longer the file it saw at start); a stderr write error has no one else to tell anyway.
  const terminal = [0, 1, 2].filter((fd) => isatty(fd))
  const unread = () => undefined
  process.stderr.on('error', unread)
  const sighup = () => {
    process.stdout.on('error', unread)
    for (const fd of terminal.splice(0)) detachTerminal(fd)
    onSignal('SIGHUP')
  }
  process.on('SIGINT', sigint)
  process.on('SIGTERM', sigterm)
  process.on('SIGHUP', sighup)

  let watcher: { close(): void } | undefined
  let reloads: Promise<void> = Promise.resolve()
  try {
    const booting = mounter.apply(composition.rows).then(() => true)
    const booted = await Promise.race([booting, launcher.exited.then(() => false)]).catch((error: unknown) => error)
    if (booted !== true && booted !== false) {
      // fail closed: a row that cannot load (not optional) stops the run before it starts
      for (const line of rowReport(failedRows(booted))) io.stderr.write(`${line}\n`)
      debugStacks(launch, mounter, composition.rows)
      printError(io, booted)
      reporter.write('boot', booted)
      return 1
    }
    // A surface may finish (exit) before the last row settled: report what failed so far.
    const statuses = mounter.statuses().filter((s) => booted || s.state === 'failed')
    for (const line of rowReport(statuses)) io.stderr.write(`${line}\n`)
    debugStacks(launch, mounter, composition.rows)
    reporter.write('boot')
    if (!booted) booting.catch(() => undefined)
    if (booted) {
      launcher.markReady()
      // Nothing holds the process: exit once any reload in flight has settled
      // (a reload that disposes the holding surface releases its hold midway).
      const whenIdle = () => void reloads.then(() => {
        if (launcher.holds > 0 || launcher.exitCode !== undefined) return
        const healthy = mounter.healthy()
        if (!healthy) io.stderr.write(`BOOT_INCOMPLETE: profile ${profile.name}: some rows did not start and nothing is running\n`)
        launcher.exit(healthy ? 0 : 1)
      })
      if (launcher.holds === 0) whenIdle()
      else launcher.onIdle(whenIdle)
      if (launcher.exitCode === undefined) {
        watcher = watchPatches([profile.patchFile, homePatchFile(launch.home)], (files) => {
          reloads = reloads.then(() => reload(files)).catch((error: unknown) => printError(io, error))
        })
      }
    }
    // While a surface holds the process it lives until exit(), even with no other handle.
    const keepAlive = setInterval(() => undefined, 1 << 30)
    try {
      return await launcher.exited
    } finally {
      clearInterval(keepAlive)
    }
  } finally {
    watcher?.close()
    process.off('SIGINT', sigint)
    process.off('SIGTERM', sigterm)
    process.off('SIGHUP', sighup)
    await unwind(root, mounter, reloads)
  }

  async function reload(files: string[]): Promise<void> {
    const changed = files.join(', ')
    let rows: ComposedRow[]
    try {
      const fresh = openProfile(launch.home, profile.name)
      rows = composeProfile({ ...layerOptions, profile: fresh }).rows
    } catch (error) {
      io.stderr.write(`reload of ${changed} failed; keeping the last good tree:\n`)
      printError(io, error, '  ')
      reporter.write('reload', error)
      return
    }
    const pins = launcher.pins
    if (pins.length) {
      io.stderr.write(`reload of ${changed} not applied: ${pins.join('; ')}; restart dsh to apply it\n`)
      reporter.write('reload', new Error(`pinned: ${pins.join('; ')}`))
      return
    }
    let result: Awaited<ReturnType<Mounter['apply']>>
    try {
      result = await mounter.apply(rows)
    } catch (error) {
      io.stderr.write(`reload of ${changed} failed:\n`)
      for (const line of rowReport(failedRows(error))) io.stderr.write(`  ${line}\n`)
      printError(io, error, '  ')
      reporter.write('reload', error)
      return
    }
    const parts = [['added', result.added], ['removed', result.removed], ['re-mounted', result.remounted]] as const
    const summary = parts.filter(([, ids]) => ids.length).map(([what, ids]) => `${what} ${ids.join(', ')}`).join('; ')
    io.stderr.write(`reloaded ${changed}: ${summary || 'no row changed'}\n`)
    const touched = new Set([...result.added, ...result.remounted])
    for (const line of rowReport(mounter.statuses().filter((s) => touched.has(s.id) || s.state === 'pending'))) io.stderr.write(`${line}\n`)
    debugStacks(launch, mounter, rows.filter((r) => touched.has(r.row.id)))
    reporter.write('reload')
  }
}

/** The failed rows a BOOT_FAILED error carries (`data.rows`). */
function failedRows(error: unknown): RowStatus[] {
  const rows = isDshError(error) ? (error.data as { rows?: Omit<RowStatus, 'state'>[] } | undefined)?.rows : undefined
  return (rows ?? []).map((r) => ({ ...r, state: 'failed' as const }))
}

/** Lets a running reload finish, disposes every row, then the root; waits at most SHUTDOWN_WAIT_MS. */
async function unwind(root: Context, mounter: Mounter, reloads: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<void>((r) => { timer = setTimeout(r, SHUTDOWN_WAIT_MS); timer.unref() })
  const work = (async () => {
    await reloads
    await mounter.dispose()
    await root.fiber.dispose()
  })().catch(() => undefined)
  await Promise.race([work, timeout])
  clearTimeout(timer)
}

function debugStacks(launch: LaunchEnv, mounter: Mounter, rows: readonly ComposedRow[]): void {
  if (!launch.io.debug) return
  for (const { row } of rows) {
    const error = mounter.error(row.id)
    if (error instanceof Error && error.stack) launch.io.stderr.write(`row ${row.id}: ${error.stack}\n`)
  }
}

/** Points `fd` (a terminal that hung up) at /dev/null: the lowest free descriptor is the one just closed. */
function detachTerminal(fd: number): void {
  try {
    closeSync(fd)
    const again = openSync('/dev/null', fd === 0 ? 'r' : 'w')
    if (again !== fd) closeSync(again)
  } catch {
    // left as it was: writes to it fail with EIO, which the listeners above absorb
  }
}
