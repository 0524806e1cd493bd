import { parseArgs } from './args.js'
import { COMMAND_HELP, HELP } from './help.js'

/**
 * The `dsh` command line (the `dsh` and `dsh-acp` entries call it). Parses the launcher's
 * flags first; `--help` and `--version` load no other package, every other path imports its
 * command lazily.
 */
export async function runDsh(argv: readonly string[]): Promise<void> {
  const args = parseArgs(argv)
  switch (args.type) {
    case 'help':
      // `dsh web --help` answers from the web package without booting the tree
      process.stdout.write(args.topic === 'web' ? (await import('@dsh/web')).WEB_HELP : args.topic ? COMMAND_HELP[args.topic] : HELP)
      break
    case 'version': {
      const { cliVersion } = await import('./env.js')
      process.stdout.write(`dsh ${cliVersion()}\n`)
      break
    }
    case 'error':
      process.stderr.write(`${args.code}: ${args.message}\n${args.hint ? `  hint: ${args.hint}\n` : ''}`)
      process.exitCode = 2
      break
    default: {
      // `--help` after a profile or an app argument: the launcher's help, then the surface's own
      if (args.type === 'run' && args.help) process.stdout.write(`${HELP}\n`)
      if (args.type === 'run' && args.help && args.dump) break
      const { main } = await import('./main.js')
      await main(args)
    }
  }
}
