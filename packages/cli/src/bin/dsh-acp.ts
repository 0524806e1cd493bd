// `dsh-acp`: the ACP server as a standalone command. It boots the same composition as
// `dsh --profile acp` (the launcher's own entry, so $DSH_HOME, profiles and patches
// behave the same); `dsh-acp login …` is `dsh login …`; `--help` prints the ACP usage.
const argv = process.argv.slice(2)
if (argv[0] === '--help' || argv[0] === '-h') {
  const { ACP_USAGE } = await import('@dsh/acp')
  process.stdout.write(`${ACP_USAGE}\n`)
} else {
  const entry = new URL('./dsh.js', import.meta.url)
  process.argv = [process.argv[0]!, entry.pathname, ...(argv[0] === 'login' ? argv : ['--profile', 'acp', ...argv])]
  await import(entry.href)
}
