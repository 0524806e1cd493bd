// `dsh-acp`: the ACP server as a standalone command. It boots the same composition as
// `dsh --profile acp` (the launcher's own entry, so $DSH_HOME, profiles and patches
// behave the same); `dsh-acp login …` is `dsh login …`; `--help` prints the ACP usage.
import { runDsh } from '../entry.js'

const argv = process.argv.slice(2)
if (argv[0] === '--help' || argv[0] === '-h') {
  void import('@dsh/acp').then(({ ACP_USAGE }) => { process.stdout.write(`${ACP_USAGE}\n`) })
} else {
  void runDsh(argv[0] === 'login' ? argv : ['--profile', 'acp', ...argv])
}
