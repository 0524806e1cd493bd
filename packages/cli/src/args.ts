import type { HelpTopic } from './help.js'
/**
 * The launcher's own command line. Pure and dependency-free (it runs before anything
 * else is loaded). The launcher takes its long flags (`--profile`, `--patch`,
 * `--dump-config`, `--dump-default-config`) wherever they stand before `--`; every
 * other token goes, in order, to the booted app (`ctx.launcher.argv`), so
 * `dsh --profile headless --json --patch p.yml "task"` works as it reads. Everything
 * after `--` goes to the app untouched. Subcommands (`web`, `plugin`, `login`,
 * `sessions`) and `--version`/`-v` count only before the first app token. `--help`/`-h`
 * alone is the launcher's help; once a profile or an app token is given it is also passed
 * on (`help: true`), so the launcher's help is followed by the surface's own.
 */
export type Args =
  | { type: 'help'; topic?: HelpTopic }
  | { type: 'version' }
  | { type: 'error'; code: string; message: string; hint?: string }
  | { type: 'run'; profile?: string; patches: string[]; dump?: 'config' | 'default'; argv: string[]; help?: true }
  | { type: 'plugin'; profile?: string; action: 'add' | 'remove' | 'list'; packages: string[] }
  | { type: 'login'; provider: string }
  | { type: 'sessions'; profile?: string; json: boolean; workspace?: string }
  | { type: 'batch'; profile?: string; argv: string[] }

export const DEFAULT_PROFILE = 'headless'
export const DEFAULT_PROVIDER = 'deepseek'

export function parseArgs(tokens: readonly string[]): Args {
  let profile: string | undefined
  let viaWeb = false
  let viaSdk = false
  let help = false
  const patches: string[] = []
  const app: string[] = []
  let dump: 'config' | 'default' | undefined
  const run = (rest: readonly string[] = []): Args => ({
    type: 'run', ...opt('profile', profile), patches, ...opt('dump', dump), argv: [...app, ...rest], ...(help ? { help: true as const } : {}),
  })
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    const [flag, inline] = splitFlag(token)
    const leading = app.length === 0
    switch (flag) {
      case '--help': case '-h':
        if (viaWeb && leading) return { type: 'help', topic: 'web' }
        if (leading && profile === undefined && !patches.length && !dump) return { type: 'help' }
        help = true
        app.push(token)
        continue
      case '--version': case '-v':
        if (leading) return { type: 'version' }
        break
      case '--profile': {
        const value = inline ?? tokens[++i]
        if (!value || value.startsWith('-')) return usage('--profile needs a profile name')
        if (profile !== undefined) return usage(viaWeb || viaSdk ? `\`${profile}\` is an alias of --profile ${profile}; do not combine it with --profile` : '--profile given twice')
        profile = value
        continue
      }
      case '--patch': {
        const value = inline ?? tokens[++i]
        if (!value) return usage('--patch needs a file')
        patches.push(value)
        continue
      }
      case '--dump-config': dump = 'config'; continue
      case '--dump-default-config': dump = 'default'; continue
      case '--': return run(tokens.slice(i + 1))
    }
    if (leading) {
      if (token === 'web' && profile === undefined) { profile = 'web'; viaWeb = true; continue }
      if (token === 'sdk' && profile === undefined) { profile = 'sdk'; viaSdk = true; continue }
      if (token === 'plugin' && !viaWeb && !viaSdk && !patches.length && !dump) return parsePlugin(tokens.slice(i + 1), profile)
      if (token === 'login' && profile === undefined && !patches.length && !dump) return parseLogin(tokens.slice(i + 1))
      if (token === 'sessions' && !viaWeb && !viaSdk && !patches.length && !dump) return parseSessions(tokens.slice(i + 1), profile)
      if (token === 'batch' && !viaWeb && !viaSdk && !patches.length && !dump) return { type: 'batch', ...opt('profile', profile), argv: tokens.slice(i + 1) }
    }
    app.push(token)
  }
  return run()
}

const SESSIONS_USE = 'use: dsh sessions [--json] [--workspace DIR] [--profile NAME]'

function parseSessions(tokens: readonly string[], profileBefore: string | undefined): Args {
  let profile = profileBefore
  let json = false
  let workspace: string | undefined
  for (let i = 0; i < tokens.length; i++) {
    const [flag, inline] = splitFlag(tokens[i]!)
    if (flag === '--help' || flag === '-h') return { type: 'help', topic: 'sessions' }
    if (flag === '--json' && inline === undefined) { json = true; continue }
    if (flag === '--workspace' || flag === '--profile') {
      const value = inline ?? tokens[++i]
      if (!value || value.startsWith('-')) return usage(`${flag} needs a ${flag === '--profile' ? 'profile name' : 'directory'}`, SESSIONS_USE)
      if (flag === '--profile') profile = value
      else workspace = value
      continue
    }
    return usage(`unknown argument ${JSON.stringify(tokens[i])} for dsh sessions`, SESSIONS_USE)
  }
  return { type: 'sessions', ...opt('profile', profile), json, ...opt('workspace', workspace) }
}

function parsePlugin(tokens: readonly string[], profileBefore: string | undefined): Args {
  let profile = profileBefore
  let action: 'add' | 'remove' | 'list' | undefined
  const packages: string[] = []
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    const [flag, inline] = splitFlag(token)
    if (flag === '--help' || flag === '-h') return { type: 'help', topic: 'plugin' }
    if (flag === '--profile') {
      const value = inline ?? tokens[++i]
      if (!value || value.startsWith('-')) return usage('--profile needs a profile name')
      profile = value
    } else if (action === undefined) {
      if (token !== 'add' && token !== 'remove' && token !== 'list') return usage(`unknown plugin command ${JSON.stringify(token)}`, 'use: dsh plugin --profile NAME add|remove|list [PKG...]')
      action = token
    } else {
      packages.push(token)
    }
  }
  if (!action) return usage('dsh plugin needs a command', 'use: dsh plugin --profile NAME add|remove|list [PKG...]')
  if (action !== 'list' && !packages.length) return usage(`dsh plugin ${action} needs a package (a name, name@version, a directory or a tarball)`)
  if (action === 'list' && packages.length) return usage('dsh plugin list takes no package')
  return { type: 'plugin', ...opt('profile', profile), action, packages }
}

function parseLogin(tokens: readonly string[]): Args {
  let provider = DEFAULT_PROVIDER
  for (let i = 0; i < tokens.length; i++) {
    const [flag, inline] = splitFlag(tokens[i]!)
    if (flag === '--help' || flag === '-h') return { type: 'help', topic: 'login' }
    if (flag !== '--provider') return usage(`unknown argument ${JSON.stringify(tokens[i])} for dsh login`, 'use: dsh login [--provider NAME]')
    const value = inline ?? tokens[++i]
    if (!value || value.startsWith('-')) return usage('--provider needs a provider name (e.g. deepseek, openai, anthropic)')
    provider = value
  }
  return { type: 'login', provider }
}

function splitFlag(token: string): [string, string | undefined] {
  if (!token.startsWith('--')) return [token, undefined]
  const eq = token.indexOf('=')
  return eq < 0 ? [token, undefined] : [token.slice(0, eq), token.slice(eq + 1)]
}

function usage(message: string, hint = 'see dsh --help'): Args {
  return { type: 'error', code: 'USAGE', message, hint }
}

function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }
}
