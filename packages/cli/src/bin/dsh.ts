// The `dsh` entry. Parses the launcher's flags first; `--help` and `--version`
// load nothing else, every other path imports its command lazily.
import { readFileSync } from 'node:fs'
import { parseArgs } from '../args.js'
import { HELP } from '../help.js'

const args = parseArgs(process.argv.slice(2))
switch (args.type) {
  case 'help':
    process.stdout.write(HELP)
    break
  case 'version': {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
    process.stdout.write(`dsh ${pkg.version}\n`)
    break
  }
  case 'error':
    process.stderr.write(`${args.code}: ${args.message}\n${args.hint ? `  hint: ${args.hint}\n` : ''}`)
    process.exitCode = 2
    break
  default: {
    const { main } = await import('../main.js')
    await main(args)
  }
}
