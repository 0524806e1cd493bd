/**
 * The launcher's own command line. Pure and dependency-free (it runs before
 * anything else is loaded). The launcher consumes its flags up to the first token
 * it does not own; that token and everything after it go to the booted app
 * (`ctx.launcher.argv`). `--` ends the launcher's flags explicitly.
 */
export type Args =
  | { type: 'help' }
  | { type: 'version' }
  | { type: 'error'; code: string; message: string; hint?: string }
  | { type: 'run'; profile?: string; patches: string[]; dump?: 'config' | 'default'; argv: string[] }
  | { type: 'plugin'; profile?: string; action: 'add' | 'remove' | 'list'; packages: string[] }
  | { type: 'login'; provider: string }
  | { type: 'batch'; profile?: string; argv: string[] }

export const DEFAULT_PROFILE = 'headless'
export const DEFAULT_PROVIDER = 'deepseek'

export function parseArgs(tokens: readonly string[]): Args {
  let profile: string | undefined
  let viaWeb = false
  const patches: string[] = []
  let dump: 'config' | 'default' | undefined
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    const [flag, inline] = splitFlag(token)
    switch (flag) {
      case '--help': case '-h': return { type: 'help' }
      case '--version': case '-v': return { type: 'version' }
      case '--profile': {
        const value = inline ?? tokens[++i]
        if (!value || value.startsWith('-')) return usage('--profile needs a profile name')
        if (profile !== undefined) return usage(viaWeb ? '`web` is an alias of --profile web; do not combine it with --profile' : '--profile given twice')
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
      case '--': return { type: 'run', ...opt('profile', profile), patches, ...opt('dump', dump), argv: tokens.slice(i + 1) }
    }
    if (token === 'web' && profile === undefined) { profile = 'web'; viaWeb = true; continue }
    if (token === 'plugin' && !viaWeb && !patches.length && !dump) return parsePlugin(tokens.slice(i + 1), profile)
    if (token === 'login' && profile === undefined && !patches.length && !dump) return parseLogin(tokens.slice(i + 1))
    if (token === 'batch' && !viaWeb && !patches.length && !dump) return { type: 'batch', ...opt('profile', profile), argv: tokens.slice(i + 1) }
    return { type: 'run', ...opt('profile', profile), patches, ...opt('dump', dump), argv: tokens.slice(i) }
  }
  return { type: 'run', ...opt('profile', profile), patches, ...opt('dump', dump), argv: [] }
}

function parsePlugin(tokens: readonly string[], profileBefore: string | undefined): Args {
  let profile = profileBefore
  let action: 'add' | 'remove' | 'list' | undefined
  const packages: string[] = []
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    const [flag, inline] = splitFlag(token)
    if (flag === '--help' || flag === '-h') return { type: 'help' }
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
    if (flag === '--help' || flag === '-h') return { type: 'help' }
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
