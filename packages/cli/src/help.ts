/** The `dsh --help` text. Kept apart so `--help` loads nothing else. */
export const HELP = `dsh — an agent harness built as a plugin tree

Usage:
  dsh [--profile NAME] [--patch FILE]... [APP ARGS...]
  dsh web [APP ARGS...]                 same as --profile web
  dsh sdk [--print-schema]              same as --profile sdk
  dsh --profile NAME --dump-config      print the effective rows (a loadable patch file)
  dsh --profile NAME --dump-default-config   print the rows of the profile's bundles only
  dsh plugin --profile NAME add|remove|list [PKG...]
  dsh login [--provider NAME]           store an API key (default provider: deepseek)
  dsh sessions [--json] [--workspace DIR] [--profile NAME]
                                        list stored sessions, newest first
  dsh batch TASKS.jsonl [--hosts HOSTS.yaml] [--parallel N] [--out RESULTS.jsonl]
                                        run many tasks at once (dsh batch --help)
  dsh --help | --version

Launcher options (taken wherever they stand before \`--\`; every other argument
goes, in order, to the profile's surface; \`dsh --profile NAME --help\` adds the
surface's own options):
  --profile NAME   profile in $DSH_HOME/profiles/NAME (default: headless).
                   Templates headless, acp, web and sdk are created on first use.
  --patch FILE     apply FILE after every other layer; repeatable, in order
  --dump-config, --dump-default-config
                   print, load no plugin, exit
  --               pass everything after it to the app

Profiles:
  headless   dsh --profile headless "task"     one-shot run, answer on stdout
  acp        dsh --profile acp                 Agent Client Protocol over stdio
  web        dsh web                           local web UI
  sdk        dsh sdk                           the host API, JSON-RPC over stdio

Layers (later wins): the profile's bundles in order, the profile's
cordis.patch.yml, $DSH_HOME/cordis.patch.yml, each --patch. Editing either
cordis.patch.yml while dsh runs reloads the changed rows.

Environment:
  DSH_HOME          home directory (default ~/.dsh): profiles, settings.yaml,
                    .credentials.yaml, cordis.patch.yml
  DEEPSEEK_API_KEY  used when no key was stored with \`dsh login\`
  DSH_DEBUG=1       print stack traces and plugin logs
  DSH_TREE_REPORT   write a JSON snapshot of the tree to this file after boot
                    and after each reload
`

/** `dsh sessions|plugin|login --help`: each command's own usage (loads nothing else either). */
export const COMMAND_HELP = {
  sessions: `usage: dsh sessions [--json] [--workspace DIR] [--profile NAME]

Lists stored sessions, newest first: id, last update (UTC), workspace and title. Resume
one with \`dsh --profile headless --resume ID "TASK"\`.
  --json            a JSON array of {id, title, workspace, updated, events}
  --workspace DIR   only the sessions of workspace DIR
  --profile NAME    read the session store that profile's rows name (default: headless;
                    $DSH_HOME/sessions unless a patch moves it)
`,
  plugin: `usage: dsh plugin --profile NAME add|remove|list [PKG...]

Manages the out-of-tree bundles of a profile ($DSH_HOME/profiles/NAME, an npm package).
  add PKG...      install each (a name, name@version, a directory or a tarball) into the
                  profile and add it to its bundles
  remove PKG...   remove each from the bundles and uninstall it
  list            the profile's bundles in layer order and its installed packages
`,
  login: `usage: dsh login [--provider NAME]

Reads an API key from stdin (not echoed on a terminal) and stores it in
$DSH_HOME/.credentials.yaml (mode 0600). It is never printed, logged or sent anywhere but
to that provider. Providers: deepseek (default), openai, anthropic.
`,
} as const

export type HelpTopic = 'web' | keyof typeof COMMAND_HELP
