import type { Args } from './args.js'
import { CLI_ROOT, cliVersion, resolveHome, type LaunchEnv } from './env.js'
import { DshError } from '@dsh/protocol'
import { printError } from './output.js'

/**
 * Runs one launcher command and ends the process with its exit code. Every
 * failure is printed as `CODE: message` (+ hint), the stack only with DSH_DEBUG=1.
 */
export async function main(args: Exclude<Args, { type: 'help' | 'version' | 'error' }>): Promise<void> {
  const env = process.env
  const io = { stderr: process.stderr, debug: env.DSH_DEBUG === '1' }
  let code: number
  try {
    const launch: LaunchEnv = { home: resolveHome(env), cwd: currentDir(), env, dshRoot: CLI_ROOT, version: cliVersion(), io }
    switch (args.type) {
      case 'run':
        code = args.dump ? await (await import('./dump.js')).dump(args, launch) : await (await import('./run.js')).run(args, launch)
        break
      case 'plugin':
        code = await (await import('./plugin-cmd.js')).pluginCommand(args, launch)
        break
      case 'login':
        code = await (await import('./login.js')).login(args, launch)
        break
      case 'sessions':
        code = await (await import('./sessions.js')).listSessions(args, launch)
        break
      case 'batch':
        code = await (await import('./batch.js')).batch(args, launch)
        break
    }
  } catch (error) {
    printError(io, error)
    code = 1
  }
  await flush(process.stdout)
  await flush(process.stderr)
  process.exit(code)
}

function flush(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => { stream.write('', () => resolve()) })
}

/** The current directory; CWD_GONE (not INTERNAL: ENOENT uv_cwd) when it was deleted under the shell. */
function currentDir(): string {
  try {
    return process.cwd()
  } catch (error) {
    throw new DshError('CWD_GONE', 'the current directory no longer exists (it was deleted or moved)', { cause: error, hint: 'cd into an existing directory and run dsh again' })
  }
}
